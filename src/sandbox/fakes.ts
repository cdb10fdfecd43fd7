import type { SandboxFake } from './fake';

/** Every fake upstream the sandbox starts. Each upstream's module adds itself here. */
export const sandboxFakes: Array<() => SandboxFake> = [];
