import nock from 'nock';
import { deepMerge } from '../../../src/core/config/load';
import type { DepsOverrides } from '../../../src/domain/deps';
import { signProof, type ProofClaims } from '../../../src/domain/proofs';
import { fixture, identityApp, identityConfig } from '../identity/support';
import { mailConfig, smsConfig } from '../otp/harness';

/* Shared by the Fe* HTTP tests: the identity provider (support of the identity tests), an SMS gateway, a real SMTP server and the collector. */

export const COLLECTOR = 'https://collector.test';
export const COLLECTOR_TOKEN = 'collector-internal-token-0001';

export const MARIO = {
  uid: 'PNIa7Xk2mR0ssi',
  email: 'mario.rossi@example.com',
  phone: '+393331234567',
  digits: '393331234567',
};
export const NEW_PHONE = '+393339876543';

/** The real app with every upstream of the flows configured; `smtpPort` is the test's SMTP server. */
export function flowsApp(smtpPort: number, overrides: Record<string, unknown> = {}, depsOverrides: DepsOverrides = {}) {
  const config = identityConfig(
    deepMerge(
      {
        ...smsConfig,
        ...mailConfig(smtpPort),
        user_collector: { base_url: COLLECTOR, internal_token: COLLECTOR_TOKEN, max_retries: 0 },
      },
      overrides,
    ),
  );
  const app = identityApp(config, depsOverrides);
  /** A proof as the answer at `step` hands it out (kind `verified` for 61 and 90). */
  const stepProof = (claims: Omit<ProofClaims, 'kind'> & { kind?: string }, ttlSeconds = 900) =>
    signProof(app.deps.secret, { kind: 'verified', step: 90, ...claims }, ttlSeconds, app.deps.now());
  return { ...app, stepProof };
}

export interface Ingested {
  body: unknown;
  token: string | undefined;
}

/** The user collector, answering `status` to every ingest and recording each. */
export function collector(status = 202): { ingested: Ingested[]; scope: nock.Scope } {
  const ingested: Ingested[] = [];
  const scope = nock(COLLECTOR)
    .persist()
    .post('/ingest/login')
    .reply(function (_uri, body) {
      ingested.push({ body, token: this.req.headers['x-internal-token'] as string | undefined });
      return [status, status < 300 ? { accepted: true } : { error: 'down' }];
    });
  return { ingested, scope };
}

/** A v3 search reply: the phone held by `holder` (or by nobody). */
export function searchReply(holder?: { uid: string; email?: string; digits?: string }) {
  if (!holder) return fixture('user-search-empty');
  const reply = fixture<{
    users: Array<{ uid: string; email: string; custom_fields: Array<{ field_name: string; value: string }> }>;
  }>('user-search');
  const user = reply.users[0]!;
  user.uid = holder.uid;
  if (holder.email) user.email = holder.email;
  const phone = user.custom_fields.find((f) => f.field_name === 'otp_phone')!;
  phone.value = holder.digits ?? MARIO.digits;
  return reply;
}

/** users/get and user/get replies for an account (without `digits`: no phone on file). */
export function accountReplies(account: { uid: string; email: string; digits?: string }) {
  const usersGet = fixture<Record<string, unknown> & { custom_fields: unknown[] }>('users-get');
  const userGet = fixture<{
    user: Record<string, unknown> & { custom_fields: Array<{ field_name: string; value: string }> };
  }>('user-get');
  Object.assign(usersGet, {
    uid: account.uid,
    email: account.email,
    custom_fields: account.digits ? [{ name: 'otp_phone', value: account.digits }] : [],
  });
  Object.assign(userGet.user, { uid: account.uid, email: account.email });
  userGet.user.custom_fields = userGet.user.custom_fields.filter((f) => f.field_name !== 'otp_phone' || account.digits);
  const phone = userGet.user.custom_fields.find((f) => f.field_name === 'otp_phone');
  if (phone && account.digits) phone.value = account.digits;
  return { usersGet, userGet };
}

/** A token reply whose JWT subject is `uid` (the register reply's uid is read from it). */
export function tokenFor(uid: string) {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return { access_token: `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: uid, iat: 1 })}.c2ln`, expires_in: 3600 };
}
