import { z } from 'zod';
import { proofRequired } from '../../domain/guard';
import { defineAction } from '../action';
import { uidField } from '../flows/fields';
import { passkeyStore } from './fields';

export const passkeyRevoke = defineAction({
  name: 'PasskeyRevoke',
  summary:
    'Operators only (header x-internal-key): deletes every passkey of a uid, for a compromised or erased account. How many it deleted.',
  request: z.object({ uid: uidField }),
  response: z.object({ revoked: z.number().int() }),
  reasons: ['passkeys_disabled', 'proof_required'],
  async handler(input, ctx) {
    const store = await passkeyStore(ctx);
    // No proof opens it, not even the account's own: the person deletes theirs one by one (PasskeyDelete).
    if (!ctx.keys.internal) throw proofRequired();
    const revoked = await store.deleteAll(input.uid);
    ctx.log.warn({ event: 'passkeys_revoked', uid: input.uid, revoked }, 'passkeys revoked by an operator');
    return { data: { revoked } };
  },
});
