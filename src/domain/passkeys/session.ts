import { STEP } from '../../../machines';
import { issueAccessToken } from '../accounts/tokens';
import { signProof } from '../proofs';
import type { ServiceContext } from '../service-context';

/*
 * What a login by passkey reaches: what a code login reaches at step 90 (docs/flows.md), without
 * the login machine: the token and its cookie `__utp`, the collector's ingest naming the method,
 * and a `verified` proof of the account for the actions that follow a login (FeAddPhone,
 * FeUpdateProfile, the identity primitives, enrolling another passkey).
 */

export type PasskeyLoginAnswer = {
  next_step: 90;
  flow: null;
  screen: 'success';
  done: true;
  uid: string;
  access_token: string;
  proof: string;
};

export async function completePasskeyLogin(
  ctx: ServiceContext,
  uid: string,
  stayLoggedIn: boolean,
): Promise<PasskeyLoginAnswer> {
  const { deps } = ctx;
  const reply = await issueAccessToken(ctx, uid, { stayLoggedIn });
  deps.metrics.login('passkey');
  // As the code login's ingest: never in the answer's way, and a failure never fails the login.
  await deps.loginIngest
    .enqueue({ uid, accessToken: reply.access_token, method: 'passkey' })
    .catch((err: unknown) =>
      deps.log.warn({ uid, err: err instanceof Error ? err.name : 'error' }, 'login ingest enqueue failed'),
    );
  ctx.log.info({ event: 'passkey_login', uid }, 'logged in by passkey');
  // The passkey proved the account itself: the proof names its uid only (`method` says how, for support),
  // and the step it was handed out at, 90, from which FeAddPhone and FeUpdateProfile resume the journey.
  const proof = signProof(
    deps.proofKey,
    { kind: 'verified', uid, step: STEP.loggedIn, method: 'passkey' },
    deps.config.security.proof_ttl_seconds,
    deps.now(),
  );
  return { next_step: 90, flow: null, screen: 'success', done: true, uid, access_token: reply.access_token, proof };
}
