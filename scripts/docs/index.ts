import type { DocGenerator } from './generator';

/** Every generated file under docs/. Each generator adds itself here. */
export const docGenerators: DocGenerator[] = [];
