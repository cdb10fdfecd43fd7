import { z } from 'zod';
import { requireVerified } from '../../domain/guard';
import { proofField, uidField } from './fields';
import { profileMeta, reducedProfile, reducedProfileShape } from '../../domain/accounts/profile';
import { defineAction } from '../action';

const getUserRequest = z.object({ uid: uidField, proof: proofField });

/** The reduced profile; an unknown uid is success with data null and meta.exists false. No raw payload. */
export const getUser = defineAction({
  name: 'get_user',
  summary: 'Reduced profile of a uid (profile read); needs a verification proof binding the uid.',
  request: getUserRequest,
  response: reducedProfileShape.nullable(),
  reasons: ['proof_required', 'invalid_proof'],
  async handler(input, ctx) {
    requireVerified(ctx, { uid: input.uid }, input.proof);
    const user = await ctx.deps.identity.getUser(ctx, input.uid);
    const profile = user ? reducedProfile(user) : null;
    return { data: profile, extra: { meta: profileMeta(profile) } };
  },
});
