import { PASSKEY_STEP, SETTLED, stepTag } from '../steps';
import { output, requestOf } from './context';
import { loginFlow } from './setup';
import { admitted } from './transitions';

/**
 * Enrolling a passkey after a login (docs/passkeys.md), with the `proof` answered at 90: the
 * options (102), then the credential the browser created for them, verified and kept (103).
 * Steps outside the contract's numbers, as the login by passkey's. The account is the login
 * proof's alone (the requests name none), and each ceremony's own proof, the `passkey_proof`,
 * is the effects' to check. Only a success counts: the states that call the effects carry no
 * step, so a refused ceremony never reaches 102 or 103 (docs/flows-design.md).
 */
export const passkeyEnrolment = loginFlow.createStateConfig({
  description: 'Enrolling a passkey on the account of the login of 90: its options, then the passkey kept.',
  initial: 'offeringPasskey',
  states: {
    offeringPasskey: {
      id: 'offeringPasskey',
      description: 'Registration options for the account, their challenge bound to it and to the login proof.',
      invoke: {
        id: 'passkeyEnrolOptions',
        src: 'passkeyEnrolOptions',
        input: ({ context }) => ({
          uid: context.uid!,
          login: context.claims?.jti ?? '',
          ...(context.email ? { email: context.email } : {}),
          ...(context.phone ? { phone: context.phone } : {}),
        }),
        onDone: { target: 'passkeyOffered', actions: { type: 'keepCeremony', params: output } },
      },
    },
    passkeyOffered: {
      id: 'passkeyOffered',
      tags: [stepTag(PASSKEY_STEP.passkeyOffered), SETTLED],
      on: { PASSKEY_ENROL: admitted('enrollingPasskey', { needs: ['uid'] }) },
    },
    enrollingPasskey: {
      id: 'enrollingPasskey',
      description: 'The new credential, checked against its challenge and the same login proof, then kept.',
      invoke: {
        id: 'enrolPasskey',
        src: 'enrolPasskey',
        input: ({ context }) => {
          const request = requestOf(context, 'PASSKEY_ENROL')!;
          return {
            uid: context.uid!,
            login: context.claims?.jti ?? '',
            passkey_proof: request.passkey_proof,
            credential: request.credential,
            name: request.name,
          };
        },
        onDone: { target: 'passkeyEnrolled', actions: { type: 'keepCeremony', params: output } },
      },
    },
    // Settles here rather than back at 90: the login is the one of 90 still (its proof resumes there), and
    // 90 reached again would be a login the funnel and the metrics have already counted (docs/flows-design.md).
    passkeyEnrolled: {
      id: 'passkeyEnrolled',
      tags: [stepTag(PASSKEY_STEP.passkeyEnrolled), SETTLED],
    },
  },
});
