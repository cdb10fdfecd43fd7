import { clientTypesDoc } from './client-types';
import type { DocGenerator } from './generator';
import { flowsDoc } from './flows';
import { journeyExamplesDoc } from './journey-examples';
import { journeySvgDocs, journeysDoc } from './journeys';
import { openapiDoc } from './openapi';
import { operationsDoc } from './operations';

/** Every generated file under docs/, and the typed client's types. Each generator adds itself here. */
export const docGenerators: DocGenerator[] = [
  // Before the document: its links are read off the journey examples.
  journeyExamplesDoc,
  openapiDoc,
  operationsDoc,
  flowsDoc,
  journeysDoc,
  ...journeySvgDocs,
  clientTypesDoc,
];
