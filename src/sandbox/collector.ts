import { createHash } from 'node:crypto';
import type { SandboxFake } from './fake';

/**
 * What the outbox keeps of a token the collector received: no character of it (masks show none),
 * but a digest a test that holds the token can match, to tell one login's ingest from another's.
 */
export const tokenFingerprint = (token: string): string =>
  createHash('sha256').update(token).digest('hex').slice(0, 16);

const PREFIX = '/collector';
export const SANDBOX_COLLECTOR_TOKEN = 'sandbox-collector-token';

/**
 * The user collector as the service calls it (docs/contract.md#upstream-calls): `POST /collector/ingest/login` with `{ uid, accessToken }` and
 * `x-internal-token: sandbox-collector-token`. Accepted ingests land in the outbox (channel
 * `collector`), token masked, so a person can see each login reach it.
 */
export function createCollectorFake(): SandboxFake {
  return {
    name: 'collector',
    mount(router, { outbox }) {
      router.post(`${PREFIX}/ingest/login`, (ctx) => {
        if (ctx.get('x-internal-token') !== SANDBOX_COLLECTOR_TOKEN) {
          ctx.status = 401;
          ctx.body = { error: 'unauthorized' };
          return;
        }
        const { uid, accessToken, method } = (ctx.request.body ?? {}) as {
          uid?: unknown;
          accessToken?: unknown;
          method?: unknown;
        };
        if (typeof uid !== 'string' || uid === '' || typeof accessToken !== 'string' || accessToken === '') {
          ctx.status = 400;
          ctx.body = { error: 'uid and accessToken are required' };
          return;
        }
        outbox.add({
          channel: 'collector',
          to: uid,
          // `method` only when the login named one (a passkey's): a code login's entry stays as it was.
          body: JSON.stringify({
            uid,
            token_sha256: tokenFingerprint(accessToken),
            ...(typeof method === 'string' ? { method } : {}),
          }),
        });
        ctx.status = 202;
        ctx.body = { accepted: true };
      });
    },
    configure: ({ baseUrl }) => ({
      user_collector: {
        base_url: `${baseUrl}${PREFIX}`,
        ingest_login_path: '/ingest/login',
        internal_token: SANDBOX_COLLECTOR_TOKEN,
      },
    }),
  };
}
