import type { UserLookupOutput } from '../effects';
import { STEP, stepTag } from '../steps';
import { accountOf, output, type LoginFlowContext } from './context';
import { refuse } from './transitions';

/* The account look-ups more than one journey makes, as states; what follows each is checked against the setup where the journey composes the state. */

/**
 * A state that asks who holds a phone before this account may have it: another account's phone
 * is refused (`phone_taken`); a free one (or the account's own) goes on by `free`, in order.
 */
export const phoneCheck = <const Free extends readonly object[]>(
  phoneOf: (context: LoginFlowContext) => string,
  free: Free,
) => ({
  invoke: {
    id: 'searchUserByPhone',
    src: 'searchUserByPhone' as const,
    input: ({ context }: { context: LoginFlowContext }) => ({ phone: phoneOf(context), account: accountOf(context) }),
    onDone: [
      {
        guard: { type: 'phoneTakenByOther' as const, params: output<UserLookupOutput> },
        target: '#refused',
        actions: refuse('phone_taken'),
      },
      ...free,
    ] as const,
  },
});

/** A state that looks up the account of the email just verified (step `userLookup`); `then` says where each answer leads. */
export const emailLookup = <const Then extends readonly object[]>(then: Then) => ({
  tags: [stepTag(STEP.userLookup)],
  invoke: {
    id: 'lookupUserByEmail',
    src: 'lookupUserByEmail' as const,
    input: ({ context }: { context: LoginFlowContext }) => ({ email: context.email! }),
    onDone: then,
  },
});
