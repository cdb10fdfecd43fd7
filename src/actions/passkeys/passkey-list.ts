import { z } from 'zod';
import { viewOf } from '../../domain/passkeys/ceremonies';
import { defineAction } from '../action';
import { proofField } from '../flows/fields';
import { passkeyStore, passkeyView, provenLogin } from './fields';

export const passkeyList = defineAction({
  name: 'PasskeyList',
  summary: 'The passkeys of the account a fresh login proved (the `proof` answered at 90), oldest first.',
  request: z.object({ proof: proofField }),
  response: z.object({ passkeys: z.array(passkeyView) }),
  reasons: ['passkeys_disabled', 'proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    const store = await passkeyStore(ctx);
    const { uid } = await provenLogin(ctx, input.proof);
    return { data: { passkeys: (await store.listByUid(uid)).map(viewOf) } };
  },
});
