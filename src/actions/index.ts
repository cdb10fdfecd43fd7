import type { Action } from './action';
import { contentActions } from './content';
import { debugActions } from './debug';
import { flowsActions } from './flows';
import { identityActions } from './identity';
import { otpActions } from './otp';
import { passkeysActions } from './passkeys';

/** Every action of the contract (docs/contract.md#actions), by name. Each group lists its own actions in its index. */
export const actions: Action[] = [
  ...otpActions,
  ...identityActions,
  ...flowsActions,
  ...passkeysActions,
  ...contentActions,
  ...debugActions,
];

export const actionsByName: ReadonlyMap<string, Action> = new Map(actions.map((a) => [a.name, a]));
