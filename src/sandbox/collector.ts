import { maskSecret } from '../core/logger';
import type { SandboxFake } from './fake';

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
        const { uid, accessToken } = (ctx.request.body ?? {}) as { uid?: unknown; accessToken?: unknown };
        if (typeof uid !== 'string' || uid === '' || typeof accessToken !== 'string' || accessToken === '') {
          ctx.status = 400;
          ctx.body = { error: 'uid and accessToken are required' };
          return;
        }
        outbox.add({ channel: 'collector', to: uid, body: JSON.stringify({ uid, accessToken: maskSecret(accessToken) }) });
        ctx.status = 202;
        ctx.body = { accepted: true };
      });
    },
    configure: ({ baseUrl }) => ({
      user_collector: { base_url: `${baseUrl}${PREFIX}`, ingest_login_path: '/ingest/login', internal_token: SANDBOX_COLLECTOR_TOKEN },
    }),
  };
}
