import { SETTLED, STEP, stepTag } from '../steps';
import { codeStep } from './code-step';
import { output } from './context';
import { loginFlow } from './setup';
import { flowIs, refuse } from './transitions';

export const phoneLogin = loginFlow.createStateConfig({
  description: 'Phone login: the SMS code, then the account that holds the phone.',
  initial: 'sendingSmsCode',
  states: {
    ...codeStep({
      to: 'phone',
      sending: { name: 'sendingSmsCode', reachable: true, tags: [stepTag(STEP.smsCodeSent)] },
      awaiting: {
        name: 'awaitingPhoneCode',
        tags: [stepTag(STEP.enterPhoneCode), SETTLED],
        admit: { needs: ['phone', 'code'], takes: ['phone'] },
      },
      verifying: { name: 'verifyingPhoneCode' },
      accepted: { target: 'findingUserByPhone' },
    }),
    findingUserByPhone: {
      invoke: {
        id: 'searchUserByPhone',
        src: 'searchUserByPhone',
        input: ({ context }) => ({ phone: context.phone! }),
        onDone: [
          { guard: { type: 'phoneOnHold', params: output }, target: '#refused', actions: refuse('phone_on_hold') },
          {
            guard: { type: 'userFound', params: output },
            target: '#issuingToken',
            actions: [{ type: 'adoptUser', params: output }, flowIs('phone')],
          },
          { target: '#askingRegistrationEmail', actions: flowIs('phone_register') },
        ],
      },
    },
  },
});
