import type { Action } from './action';

/** Every action of SPEC.md, by name. Groups register here and nowhere else. */
export const actions: Action[] = [];

export const actionsByName: ReadonlyMap<string, Action> = new Map(actions.map((a) => [a.name, a]));
