import type { ClaimAccountOutput } from '../effects';
import { SETTLED, STEP, stepTag } from '../steps';
import { codeStep } from './code-step';
import { output } from './context';
import { emailLookup } from './lookups';
import { loginFlow } from './setup';
import { admittedWhen, flowIs } from './transitions';

/*
 * An account whose email was never confirmed is claimed once its email is proven (the phone on
 * it may be a registrant's who typed someone else's email: src/domain/accounts/email-claim.ts).
 * A phone the claim dropped is offered back at step 65: a code to it shows one person holds
 * both, and the phone is saved again; "not my phone" (flow `email_phone_declined`) leaves the
 * claim as it stands and asks for a phone (61).
 */
export const emailLogin = loginFlow.createStateConfig({
  description: 'Email login: the email code, then the account that holds the email and its phone on file.',
  initial: 'sendingEmailCode',
  states: {
    ...codeStep({
      to: 'email',
      sending: { name: 'sendingEmailCode', reachable: true, tags: [stepTag(STEP.emailCodeSent)] },
      awaiting: {
        name: 'awaitingEmailCode',
        tags: [stepTag(STEP.enterEmailCode), SETTLED],
        admit: { needs: ['email', 'code'], takes: ['email'] },
      },
      verifying: { name: 'verifyingEmailCode', tags: [stepTag(STEP.emailVerification)] },
      accepted: { target: 'lookingUpUser' },
    }),
    lookingUpUser: emailLookup([
      {
        guard: { type: 'userFound', params: output },
        target: 'checkingPhoneOnFile',
        actions: { type: 'adoptAccount', params: output },
      },
      { target: '#fillingEmailRegistrationForm', actions: flowIs('email_register') },
    ]),
    checkingPhoneOnFile: {
      tags: [stepTag(STEP.accountFound)],
      always: [
        { guard: 'emailUnconfirmed', target: 'claimingAccount' },
        { guard: 'phoneHeld', target: 'sendingPhoneOnFileCode', actions: flowIs('email_with_phone') },
        { guard: 'knowsPhone', target: 'welcomingBack', actions: flowIs('email_with_phone') },
        { target: '#askingPhone', actions: flowIs('email_add_phone') },
      ],
    },
    claimingAccount: {
      description:
        'The email was never confirmed: earlier proofs void, the phone on file dropped (read back gone) and held for the account, the email confirmed.',
      invoke: {
        id: 'claimAccount',
        src: 'claimAccount',
        input: ({ context }) => ({ uid: context.uid!, ...(context.phone ? { phone: context.phone } : {}) }),
        onDone: [
          {
            guard: { type: 'phoneWasDropped', params: output<ClaimAccountOutput> },
            target: 'sendingPhoneOnFileCode',
            actions: [{ type: 'adoptHeldPhone', params: output<ClaimAccountOutput> }, flowIs('email_with_phone')],
          },
          { target: '#askingPhone', actions: ['forgetPhone', flowIs('email_add_phone')] },
        ],
      },
    },
    welcomingBack: {
      tags: [stepTag(STEP.knownUserWithPhone)],
      always: { target: '#issuingToken' },
    },
    ...codeStep({
      to: 'phone',
      sending: { name: 'sendingPhoneOnFileCode' },
      awaiting: {
        name: 'awaitingPhoneOnFileCode',
        tags: [stepTag(STEP.knownUserWithPhone), SETTLED],
        meta: { proof: { field: 'pending_proof', carries: ['uid', 'email', 'phone'] }, showsPhone: true },
        admit: { needs: ['uid', 'phone', 'code'] },
        instead: admittedWhen('declinesPhone', 'decliningPhoneOnFile', { needs: ['uid'] }),
      },
      verifying: { name: 'verifyingPhoneOnFileCode' },
      accepted: { target: '#recheckingNewPhone', actions: 'savePhoneLater' },
    }),
    decliningPhoneOnFile: {
      description: 'Not the owner’s phone: its hold ends, the claim stands (the phone was dropped and read back gone).',
      invoke: {
        id: 'releasePhone',
        src: 'releasePhone',
        input: ({ context }) => ({ uid: context.uid! }),
        onDone: { target: '#askingPhone', actions: ['forgetPhone', flowIs('email_add_phone')] },
      },
    },
  },
});
