import type { Action } from '../action';

export const contentActions: Action[] = [];
