import type { DocGenerator } from './generator';
import { flowsDoc } from './flows';
import { journeySvgDocs, journeysDoc } from './journeys';
import { openapiDoc } from './openapi';
import { operationsDoc } from './operations';

/** Every generated file under docs/. Each generator adds itself here. */
export const docGenerators: DocGenerator[] = [openapiDoc, operationsDoc, flowsDoc, journeysDoc, ...journeySvgDocs];
