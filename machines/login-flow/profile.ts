import type { UpdateProfileOutput } from '../effects';
import { STEP, stepTag, type ProfileStep } from '../steps';
import { output, profileFields, type LoginFlowContext } from './context';
import { phoneCheck } from './lookups';
import { loginFlow } from './setup';
import { refuse } from './transitions';

/** Saving one kind of profile fields (`step`): a phone another account took meanwhile is refused, else `saved`. */
const saving = <const Saved extends readonly object[]>(step: ProfileStep, saved: Saved) => ({
  tags: [stepTag(step)],
  invoke: {
    id: 'updateProfile',
    src: 'updateProfile' as const,
    input: ({ context }: { context: LoginFlowContext }) => ({
      uid: context.uid!,
      step,
      fields: profileFields(context, step),
    }),
    onDone: [
      {
        guard: { type: 'saveRefused' as const, params: output<UpdateProfileOutput> },
        target: '#refused',
        actions: refuse('phone_taken'),
      },
      ...saved,
    ] as const,
  },
});

export const profile = loginFlow.createStateConfig({
  description: `The profile: a changed phone checked first, then identity (${STEP.identitySaved}) and custom (${STEP.customFieldsSaved}) fields saved.`,
  initial: 'reviewingProfile',
  states: {
    reviewingProfile: {
      id: 'reviewingProfile',
      always: [
        {
          guard: 'profilePhoneUnverified',
          target: '#refused',
          actions: refuse('phone_not_verified', { field: 'otp_phone' }),
        },
        { guard: 'changesPhone', target: 'checkingProfilePhone', actions: 'keepProfilePhone' },
        { target: 'savingProfile' },
      ],
    },
    checkingProfilePhone: phoneCheck((context) => context.pendingPhone!, [{ target: 'savingProfile' }]),
    savingProfile: {
      id: 'savingProfile',
      always: [
        { guard: 'hasIdentityFields', target: 'savingIdentity' },
        { guard: 'hasCustomFields', target: 'savingCustomFields' },
        { target: '#issuingToken' },
      ],
    },
    savingIdentity: saving(STEP.identitySaved, [
      { guard: 'hasCustomFields', target: 'savingCustomFields' },
      { target: '#issuingToken' },
    ]),
    savingCustomFields: saving(STEP.customFieldsSaved, [{ target: '#issuingToken', actions: 'adoptSavedPhone' }]),
  },
});
