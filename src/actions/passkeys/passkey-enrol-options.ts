import { z } from 'zod';
import { enrolOptions } from '../../domain/passkeys/ceremonies';
import { phoneHint } from '../../domain/phone';
import { defineAction } from '../action';
import { proofField } from '../flows/fields';
import { optionsResponse, passkeyStore, provenLogin } from './fields';

export const passkeyEnrolOptions = defineAction({
  name: 'PasskeyEnrolOptions',
  summary:
    'Options to enrol a passkey on the account a fresh login proved (the `proof` answered at 90): the account never comes from the request.',
  request: z.object({ proof: proofField }),
  response: optionsResponse('PublicKeyCredentialCreationOptions'),
  reasons: ['passkeys_disabled', 'proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    const store = await passkeyStore(ctx);
    const login = await provenLogin(ctx, input.proof);
    // What the browser shows beside the passkey: how the person knows the account, not its handle.
    const shown =
      typeof login.email === 'string'
        ? login.email
        : typeof login.phone === 'string'
          ? phoneHint(login.phone)
          : 'account';
    const { options, passkeyProof } = await enrolOptions(ctx, store, login, shown);
    return { data: { options, passkey_proof: passkeyProof } };
  },
});
