import { z } from 'zod';
import { ACTION_ENTRY } from '../../../machines';
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

const enrolResponse = z.object({ passkey: passkeyView });

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
  response: enrolResponse,
  reasons: ['passkeys_disabled', 'proof_required', 'invalid_proof', 'passkey_challenge_invalid', 'passkey_refused'],
  async handler(input, ctx) {
    await passkeyStore(ctx);
    // Refused as before the machine ran it: no proof naming an account, or one voided by a claim since.
    await provenLogin(ctx, input.proof);
    // A path of the login machine after 102 (docs/flows-design.md): 103, the passkey verified and kept.
    const { ceremony } = await ctx.flows.run(ACTION_ENTRY.PasskeyEnrol, input, ctx);
    return { data: ceremony as z.infer<typeof enrolResponse> };
  },
});
