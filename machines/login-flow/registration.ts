import { SETTLED, STEP, stepTag } from '../steps';
import { codeStep } from './code-step';
import { output, requestOf } from './context';
import { emailLookup, phoneCheck } from './lookups';
import { loginFlow } from './setup';
import { admitted, flowIs } from './transitions';

export const registration = loginFlow.createStateConfig({
  description:
    'Registration: the email verified by code (after a verified phone, or from scratch), the form, the new account and its double opt-in.',
  initial: 'enteringRegistrationEmail',
  states: {
    enteringRegistrationEmail: {
      description: 'Email registration without a verified phone: the email to send the code to.',
      tags: [SETTLED],
      on: {
        REGISTER: admitted('sendingRegistrationEmailCode', { needs: ['email'], takes: ['email'] }, [
          flowIs('email_register'),
        ]),
      },
    },
    askingRegistrationEmail: {
      id: 'askingRegistrationEmail',
      tags: [stepTag(STEP.enterRegistrationEmail), SETTLED],
      meta: { proof: { field: 'phone_proof', carries: ['phone'] } },
      on: { REGISTER: admitted('sendingRegistrationEmailCode', { needs: ['phone', 'email'], takes: ['email'] }) },
    },
    ...codeStep({
      to: 'email',
      sending: { name: 'sendingRegistrationEmailCode' },
      awaiting: {
        name: 'awaitingRegistrationEmailCode',
        tags: [stepTag(STEP.enterRegistrationEmailCode), SETTLED],
        meta: { proof: { field: 'pending_proof', carries: ['phone', 'email'] } },
        admit: { needs: ['email', 'code'] },
      },
      verifying: {
        name: 'verifyingRegistrationEmailCode',
        description: 'The registration email code, checked against the pending proof.',
        tags: [stepTag(STEP.enterRegistrationEmail)],
      },
      accepted: { target: 'checkingRegistrationEmail' },
    }),
    checkingRegistrationEmail: {
      description: 'Both codes verified: an account may already hold the email.',
      ...emailLookup([
        // The account keeps its own phone; the one just verified is not saved over it.
        {
          guard: { type: 'userFoundWithPhone', params: output },
          target: 'confirmingDoi',
          actions: { type: 'adoptAccount', params: output },
        },
        {
          guard: { type: 'userFound', params: output },
          target: 'confirmingDoi',
          actions: ['savePhoneLater', { type: 'adoptAccount', params: output }],
        },
        { guard: 'knowsPhone', target: 'issuingRegisterProof', actions: flowIs('phone_register') },
        { target: 'fillingEmailRegistrationForm', actions: flowIs('email_register') },
      ]),
    },
    issuingRegisterProof: {
      tags: [stepTag(STEP.registerProofIssued)],
      always: { target: 'fillingPhoneRegistrationForm' },
    },
    fillingPhoneRegistrationForm: {
      tags: [stepTag(STEP.registrationForm), SETTLED],
      meta: { proof: { field: 'register_proof', carries: ['phone', 'email'] } },
      on: {
        REGISTER: admitted('checkingRegistrationPhone', { needs: ['phone', 'email'] }, [{ type: 'savePhoneLater' }]),
      },
    },
    checkingRegistrationPhone: phoneCheck((context) => context.pendingPhone!, [{ target: 'registeringUser' }]),
    fillingEmailRegistrationForm: {
      id: 'fillingEmailRegistrationForm',
      tags: [stepTag(STEP.newUserForm), SETTLED],
      meta: { proof: { field: 'register_proof', carries: ['email'] } },
      on: { REGISTER: admitted('registeringUser', { needs: ['email'] }, [flowIs('email_register_phone')]) },
    },
    registeringUser: {
      invoke: {
        id: 'registerUser',
        src: 'registerUser',
        input: ({ context }) => {
          const request = requestOf(context, 'REGISTER');
          return {
            email: context.email!,
            ...(request?.consents ? { consents: request.consents } : {}),
            ...(request?.is_magic_link_sent !== undefined ? { is_magic_link_sent: request.is_magic_link_sent } : {}),
          };
        },
        onDone: { target: 'confirmingDoi', actions: { type: 'adoptRegisteredUid', params: output } },
      },
    },
    confirmingDoi: {
      description: 'The email was verified by code: its double opt-in is confirmed.',
      tags: [stepTag(STEP.doiConfirmed)],
      invoke: {
        id: 'confirmDoi',
        src: 'confirmDoi',
        input: ({ context }) => ({ uid: context.uid! }),
        onDone: { target: '#savingProfile' },
      },
    },
  },
});
