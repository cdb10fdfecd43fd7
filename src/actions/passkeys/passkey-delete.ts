import { z } from 'zod';
import { apiError } from '../../core/errors';
import { defineAction } from '../action';
import { proofField } from '../flows/fields';
import { passkeyIdField, passkeyStore, provenLogin } from './fields';

export const passkeyDelete = defineAction({
  name: 'PasskeyDelete',
  summary:
    'Deletes one of the passkeys of the account a fresh login proved: it logs in no more (passkey_unknown), and the page tells the browser.',
  request: z.object({ proof: proofField, id: passkeyIdField }),
  response: z.object({ deleted: z.literal(true) }),
  reasons: ['passkeys_disabled', 'proof_required', 'invalid_proof', 'passkey_unknown'],
  async handler(input, ctx) {
    const store = await passkeyStore(ctx);
    const { uid } = await provenLogin(ctx, input.proof);
    if (!(await store.delete(uid, input.id))) throw apiError('passkey_unknown', { data: { credential_id: input.id } });
    ctx.log.info({ event: 'passkey_deleted', uid }, 'passkey deleted');
    return { data: { deleted: true } };
  },
});
