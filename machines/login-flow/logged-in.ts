import { SETTLED, STEP, stepTag } from '../steps';
import { output } from './context';
import { loginFlow } from './setup';
import { admitted } from './transitions';

/* Every completed login: the token, the ingest, and the logged-in user's next requests. */

export const issuingToken = loginFlow.createStateConfig({
  id: 'issuingToken',
  invoke: {
    id: 'issueToken',
    src: 'issueToken',
    input: ({ context }) => ({
      uid: context.uid!,
      stay_logged_in: context.stayLoggedIn,
      ...(context.method ? { method: context.method } : {}),
    }),
    onDone: { target: 'ingestingLogin', actions: { type: 'keepToken', params: output } },
  },
});

export const ingestingLogin = loginFlow.createStateConfig({
  description: 'Queues {uid, accessToken} for the user collector; its failure never fails the login.',
  invoke: {
    id: 'ingestLogin',
    src: 'ingestLogin',
    input: ({ context }) => ({
      uid: context.uid!,
      accessToken: context.accessToken!,
      ...(context.method ? { method: context.method } : {}),
    }),
    onDone: { target: 'loggedIn' },
    onError: { target: 'loggedIn' },
  },
});

export const loggedIn = loginFlow.createStateConfig({
  tags: [stepTag(STEP.loggedIn), SETTLED],
  meta: { proof: { field: 'proof', carries: ['uid', 'email', 'phone'] } },
  on: {
    ADD_PHONE: admitted('#checkingNewPhone', { needs: ['account'] }),
    UPDATE_PROFILE: admitted('#reviewingProfile', { needs: ['uid'] }),
    PASSKEY_ENROL_OPTIONS: admitted('#offeringPasskey', { needs: ['uid'] }),
  },
});
