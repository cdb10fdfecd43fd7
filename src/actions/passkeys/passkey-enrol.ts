import { z } from 'zod';
import { enrol } from '../../domain/passkeys/ceremonies';
import { defineAction } from '../action';
import { proofField } from '../flows/fields';
import {
  passkeyNameField,
  passkeyProofField,
  passkeyStore,
  passkeyView,
  provenLogin,
  registrationCredential,
} from './fields';

export const passkeyEnrol = defineAction({
  name: 'PasskeyEnrol',
  summary:
    'Verifies and keeps a new passkey: the credential answering PasskeyEnrolOptions, with that answer’s passkey_proof and the same login proof.',
  request: z.object({
    proof: proofField,
    passkey_proof: passkeyProofField,
    credential: registrationCredential,
    name: passkeyNameField.default('Passkey'),
  }),
  response: z.object({ passkey: passkeyView }),
  reasons: ['passkeys_disabled', 'proof_required', 'invalid_proof', 'passkey_challenge_invalid', 'passkey_refused'],
  async handler(input, ctx) {
    const store = await passkeyStore(ctx);
    const login = await provenLogin(ctx, input.proof);
    const passkey = await enrol(ctx, store, {
      login,
      passkeyProof: input.passkey_proof,
      response: input.credential,
      name: input.name,
    });
    return { data: { passkey } };
  },
});
