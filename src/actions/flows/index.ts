import type { Action } from '../action';

export const flowsActions: Action[] = [];
