import { z } from 'zod';
import { loginOptions } from '../../domain/passkeys/ceremonies';
import { defineAction } from '../action';
import { optionsResponse, passkeyStore } from './fields';

export const passkeyLoginOptions = defineAction({
  name: 'PasskeyLoginOptions',
  summary:
    'Options for a login by passkey (autofill or "Usa la passkey"): the same for everybody, no identifier asked, so no answer tells whether an account has passkeys.',
  request: z.object({}),
  response: optionsResponse('PublicKeyCredentialRequestOptions'),
  reasons: ['passkeys_disabled'],
  async handler(_input, ctx) {
    await passkeyStore(ctx);
    const { options, passkeyProof } = await loginOptions(ctx);
    return { data: { options, passkey_proof: passkeyProof } };
  },
});
