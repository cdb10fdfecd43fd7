import { z } from 'zod';
import { ACTION_ENTRY } from '../../../machines';
import { defineAction } from '../action';
import { proofField } from '../flows/fields';
import { optionsResponse, passkeyStore, provenLogin } from './fields';

const enrolOptionsResponse = optionsResponse('PublicKeyCredentialCreationOptions');

export const passkeyEnrolOptions = defineAction({
  name: 'PasskeyEnrolOptions',
  summary:
    'Options to enrol a passkey on the account a fresh login proved (the `proof` answered at 90): the account never comes from the request.',
  request: z.object({ proof: proofField }),
  response: enrolOptionsResponse,
  reasons: ['passkeys_disabled', 'proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    await passkeyStore(ctx);
    // Refused as before the machine ran it: no proof naming an account, or one voided by a claim since.
    await provenLogin(ctx, input.proof);
    // A path of the login machine after 90 (docs/flows-design.md): 102, the options issued, counted by the funnel and recorded.
    const { ceremony } = await ctx.flows.run(ACTION_ENTRY.PasskeyEnrolOptions, input, ctx);
    return { data: ceremony as z.infer<typeof enrolOptionsResponse> };
  },
});
