import { z } from 'zod';
import { login } from '../../domain/passkeys/ceremonies';
import { completePasskeyLogin } from '../../domain/passkeys/session';
import { defineAction } from '../action';
import { stayLoggedInField } from '../flows/fields';
import { authenticationCredential, passkeyProofField, passkeyStore } from './fields';

export const passkeyLogin = defineAction({
  name: 'PasskeyLogin',
  summary:
    'Verifies an assertion answering PasskeyLoginOptions and logs the person in as a code does at 90: token (and cookie __utp), the collector told, a `verified` proof.',
  request: z.object({
    passkey_proof: passkeyProofField,
    credential: authenticationCredential,
    stay_logged_in: stayLoggedInField,
  }),
  response: z.object({
    next_step: z.literal(90),
    flow: z.null(),
    screen: z.literal('success'),
    done: z.literal(true),
    uid: z.string(),
    access_token: z.string(),
    proof: z.string().describe('a `verified` proof of the account, as the one answered at 90'),
  }),
  reasons: ['passkeys_disabled', 'passkey_challenge_invalid', 'passkey_unknown', 'passkey_refused', 'rate_limited'],
  async handler(input, ctx) {
    const store = await passkeyStore(ctx);
    // Limited per client like the codes' verifications, and per passkey named, whoever sends the tries.
    await ctx.deps.limits.passkeyLogin(ctx.ip, input.credential.id);
    const { uid } = await login(ctx, store, { passkeyProof: input.passkey_proof, response: input.credential });
    return { data: await completePasskeyLogin(ctx, uid, input.stay_logged_in ?? false) };
  },
});
