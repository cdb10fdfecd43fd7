import type { Action } from '../action';

export const debugActions: Action[] = [];
