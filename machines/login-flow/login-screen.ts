import { SETTLED, STEP, stepTag } from '../steps';
import { loginFlow } from './setup';
import { flowIs, refuse } from './transitions';

/** The login screen: a phone starts the phone login, an email the email login (or asks for its password), a passkey logs in. */
export const enteringIdentifier = loginFlow.createStateConfig({
  description: 'The login screen: phone or email, or the passkey the browser offers.',
  tags: [SETTLED],
  on: {
    LOGIN: [
      { guard: 'wantsPassword', target: 'askingPassword', actions: ['acceptLogin', flowIs('email')] },
      { guard: 'identifierIsPhone', target: '#sendingSmsCode', actions: ['acceptLogin', flowIs('phone')] },
      { guard: 'identifierIsEmail', target: '#sendingEmailCode', actions: ['acceptLogin', flowIs('email')] },
      { target: 'refused', actions: refuse('invalid_request', { field: 'identifier' }) },
    ],
    PASSKEY_LOGIN: { target: '#verifyingPasskey', actions: 'acceptPasskeyLogin' },
  },
});

export const askingPassword = loginFlow.createStateConfig({
  type: 'final',
  tags: [stepTag(STEP.enterPassword), SETTLED],
});
