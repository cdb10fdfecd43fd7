import type { Action } from '../action';

export const identityActions: Action[] = [];
