import { z } from 'zod';
import { ACTION_ENTRY } from '../../../machines';
import { defineAction } from '../action';
import { stayLoggedInField } from '../flows/fields';
import { authenticationCredential, passkeyProofField, passkeyStore } from './fields';

const passkeyLoginResponse = z.object({
  next_step: z.literal(90),
  flow: z.null(),
  screen: z.literal('success'),
  done: z.literal(true),
  uid: z.string(),
  access_token: z.string(),
  proof: z.string().describe('a `verified` proof of the account, as the one answered at 90'),
});
/** What the machine answers at 90 for a login by passkey: no flow (no code verified an identifier). */
type PasskeyLoginData = z.infer<typeof passkeyLoginResponse>;

export const passkeyLogin = defineAction({
  name: 'PasskeyLogin',
  summary:
    'Verifies an assertion answering PasskeyLoginOptions and logs the person in as a code does at 90: token (and cookie __utp), the collector told, a `verified` proof.',
  request: z.object({
    passkey_proof: passkeyProofField,
    credential: authenticationCredential,
    stay_logged_in: stayLoggedInField,
  }),
  response: passkeyLoginResponse,
  reasons: ['passkeys_disabled', 'passkey_challenge_invalid', 'passkey_unknown', 'passkey_refused', 'rate_limited'],
  async handler(input, ctx) {
    await passkeyStore(ctx);
    // Limited per client like the codes' verifications, and per passkey named, whoever sends the tries.
    await ctx.deps.limits.passkeyLogin(ctx.ip, input.credential.id);
    // A path of the login machine (docs/flows-design.md): 101, then the token, the ingest and 90 a
    // code login reaches, counted by the funnel and recorded for replay as every journey's request.
    const { data } = await ctx.flows.run(ACTION_ENTRY.PasskeyLogin, input, ctx);
    return { data: data as PasskeyLoginData };
  },
});
