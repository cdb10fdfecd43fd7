import type { z } from 'zod';
import { withIdpDebug } from '../../domain/idp-debug';
import { defineAction, type Action } from '../action';

export { withIdpDebug };

/** An action whose answer carries `idp_debug` when `debug` is on. */
export const defineIdentityAction = <S extends z.ZodType>(action: Action<S>): Action<S> =>
  defineAction({ ...action, handler: (input, ctx) => withIdpDebug(ctx, () => action.handler(input, ctx)) });
