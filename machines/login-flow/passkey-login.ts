import { PASSKEY_STEP, stepTag } from '../steps';
import { output, requestOf } from './context';
import { loginFlow } from './setup';

/**
 * Login by passkey (docs/passkeys.md): the assertion verified, then the token, the ingest and 90
 * every completed login shares. No code, no lookup: the passkey names its account. Its step is
 * outside the contract's numbers (101, machines/steps.ts), passed within PasskeyLogin's one request.
 */
export const verifyingPasskey = loginFlow.createStateConfig({
  id: 'verifyingPasskey',
  description: 'The assertion the browser signed, checked against its challenge and the passkey kept for it.',
  tags: [stepTag(PASSKEY_STEP.passkeyAsserting)],
  invoke: {
    id: 'verifyPasskey',
    src: 'verifyPasskey',
    input: ({ context }) => {
      const request = requestOf(context, 'PASSKEY_LOGIN')!;
      return { passkey_proof: request.passkey_proof, credential: request.credential };
    },
    onDone: { target: '#issuingToken', actions: { type: 'adoptPasskeyAccount', params: output } },
  },
});
