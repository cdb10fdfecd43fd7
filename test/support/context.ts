import { background } from '../../src/core/context';

/** The call context of a test calling a client or a domain service directly, outside any request. */
export const testCtx = background('test');
