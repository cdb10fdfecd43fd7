import { z } from 'zod';
import { proofRequired, presentedProof, refuseIfClaimedSince } from '../../domain/guard';
import { enrol } from '../../domain/passkeys/ceremonies';
import { defineAction } from '../action';
import { proofField } from '../flows/fields';
import { passkeyProofField, passkeyStore, registrationCredential } from './fields';

const passkeyView = z.object({
  id: z.string(),
  name: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  device_type: z.string(),
  backed_up: z.boolean(),
});

export const passkeyEnrol = defineAction({
  name: 'PasskeyEnrol',
  summary:
    'Verifies and keeps a new passkey: the credential answering PasskeyEnrolOptions, with that answer’s passkey_proof and the same login proof.',
  request: z.object({
    proof: proofField,
    passkey_proof: passkeyProofField,
    credential: registrationCredential,
    name: z.string().trim().min(1).max(64).default('Passkey').describe('what the person calls this passkey'),
  }),
  response: z.object({ passkey: passkeyView }),
  reasons: ['passkeys_disabled', 'proof_required', 'invalid_proof', 'passkey_challenge_invalid', 'passkey_refused'],
  async handler(input, ctx) {
    const store = await passkeyStore(ctx);
    const login = presentedProof(ctx, input.proof);
    if (!login || typeof login.uid !== 'string') throw proofRequired();
    await refuseIfClaimedSince(ctx, login);
    const passkey = await enrol(ctx, store, {
      login: { ...login, uid: login.uid },
      passkeyProof: input.passkey_proof,
      response: input.credential,
      name: input.name,
    });
    return { data: { passkey } };
  },
});
