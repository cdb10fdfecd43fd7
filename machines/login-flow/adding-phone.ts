import { SETTLED, STEP, stepTag } from '../steps';
import { codeStep } from './code-step';
import { requestOf } from './context';
import { phoneCheck } from './lookups';
import { loginFlow } from './setup';
import { admitted, refuse } from './transitions';

export const addingPhone = loginFlow.createStateConfig({
  description:
    'Adding a phone (an account without one, or a logged-in user): free for this account, then its SMS code.',
  initial: 'askingPhone',
  states: {
    askingPhone: {
      id: 'askingPhone',
      tags: [stepTag(STEP.addPhone), SETTLED],
      meta: { proof: { field: 'proof', carries: ['uid', 'email'] } },
      on: { ADD_PHONE: admitted('checkingNewPhone', { needs: ['account'] }) },
    },
    checkingNewPhone: {
      id: 'checkingNewPhone',
      ...phoneCheck((context) => requestOf(context, 'ADD_PHONE')!.phone, [{ target: 'sendingNewPhoneCode' }]),
    },
    ...codeStep({
      to: 'newPhone',
      sending: { name: 'sendingNewPhoneCode' },
      awaiting: {
        name: 'awaitingNewPhoneCode',
        tags: [stepTag(STEP.enterNewPhoneCode), SETTLED],
        meta: { proof: { field: 'pending_proof', carries: ['uid', 'email', 'phone'] } },
        admit: { needs: ['phone', 'code'] },
      },
      verifying: { name: 'verifyingNewPhoneCode' },
      accepted: { target: 'recheckingNewPhone', actions: 'savePhoneLater' },
    }),
    recheckingNewPhone: {
      id: 'recheckingNewPhone',
      description: 'The phone may have been taken since the code went out.',
      ...phoneCheck(
        (context) => context.pendingPhone!,
        [
          { guard: 'knowsUid', target: '#savingProfile' },
          { target: '#refused', actions: refuse('invalid_request', { field: 'uid' }) },
        ],
      ),
    },
  },
});
