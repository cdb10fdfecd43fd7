import { z } from 'zod';
import { apiError } from '../../core/errors';
import { viewOf } from '../../domain/passkeys/ceremonies';
import { defineAction } from '../action';
import { proofField } from '../flows/fields';
import { passkeyIdField, passkeyNameField, passkeyStore, passkeyView, provenLogin } from './fields';

export const passkeyRename = defineAction({
  name: 'PasskeyRename',
  summary: 'Renames one of the passkeys of the account a fresh login proved; another account’s is unknown to it.',
  request: z.object({ proof: proofField, id: passkeyIdField, name: passkeyNameField }),
  response: z.object({ passkey: passkeyView }),
  reasons: ['passkeys_disabled', 'proof_required', 'invalid_proof', 'passkey_unknown'],
  async handler(input, ctx) {
    const store = await passkeyStore(ctx);
    const { uid } = await provenLogin(ctx, input.proof);
    // Only the proven account's: another's passkey answers as one that does not exist.
    if (!(await store.rename(uid, input.id, input.name)))
      throw apiError('passkey_unknown', { data: { credential_id: input.id } });
    return { data: { passkey: viewOf((await store.get(input.id))!) } };
  },
});
