import { SETTLED, STEP, stepTag } from '../steps';
import { codeStep } from './code-step';
import { output } from './context';
import { emailLookup } from './lookups';
import { loginFlow } from './setup';
import { flowIs } from './transitions';

export const emailLogin = loginFlow.createStateConfig({
  description: 'Email login: the email code, then the account that holds the email and its phone on file.',
  initial: 'sendingEmailCode',
  states: {
    ...codeStep({
      to: 'email',
      sending: { name: 'sendingEmailCode', reachable: true, tags: [stepTag(STEP.emailCodeSent)] },
      awaiting: { name: 'awaitingEmailCode', tags: [stepTag(STEP.enterEmailCode), SETTLED], admit: { needs: ['email', 'code'], takes: ['email'] } },
      verifying: { name: 'verifyingEmailCode', tags: [stepTag(STEP.emailVerification)] },
      accepted: { target: 'lookingUpUser' },
    }),
    lookingUpUser: emailLookup([
      { guard: { type: 'userFound', params: output }, target: 'checkingPhoneOnFile', actions: { type: 'adoptAccount', params: output } },
      { target: '#fillingEmailRegistrationForm', actions: flowIs('email_register') },
    ]),
    checkingPhoneOnFile: {
      tags: [stepTag(STEP.accountFound)],
      always: [
        { guard: 'knowsPhone', target: 'welcomingBack', actions: flowIs('email_with_phone') },
        { target: '#askingPhone', actions: flowIs('email_add_phone') },
      ],
    },
    welcomingBack: {
      tags: [stepTag(STEP.knownUserWithPhone)],
      always: { target: '#issuingToken' },
    },
  },
});
