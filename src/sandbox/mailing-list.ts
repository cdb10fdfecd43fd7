import { maskSecret } from '../core/logger';
import refused from './fixtures/mailing-list/refused.json';
import subscribed from './fixtures/mailing-list/subscribed.json';
import type { SandboxFake } from './fake';

const PREFIX = '/mailing-list';
const HEADLINES = ['head_a', 'head_b', 'head_c', 'head_d'];
const keyOf = (head: string) => `sandbox-key-${head}`;

/**
 * The mailing-list service: every subscription lands in the outbox (channel `newsletter`), so a
 * person sees what was sent. Keys are `sandbox-key-<head>`; any other key is refused like a real one.
 */
export function createMailingListFake(): SandboxFake {
  return {
    name: 'mailing-list',
    mount(router, { outbox }) {
      router.get(`${PREFIX}/tracker/securesub/email/:email/ml/:mlids`, (ctx) => {
        const key = typeof ctx.query.api_key === 'string' ? ctx.query.api_key : '';
        const head = HEADLINES.find((h) => keyOf(h) === key);
        if (!head) {
          ctx.status = 401;
          ctx.body = refused;
          return;
        }
        outbox.add({
          channel: 'newsletter',
          to: ctx.params.email!,
          subject: `Iscrizione newsletter ${head}`,
          body: `Liste ${ctx.params.mlids} (chiave ${maskSecret(key)})`,
        });
        ctx.body = subscribed;
      });
    },
    configure: ({ baseUrl }) => ({
      newsletter: { esp_url: `${baseUrl}${PREFIX}`, api_keys: Object.fromEntries(HEADLINES.map((h) => [h, keyOf(h)])) },
    }),
  };
}
