import feedA from './fixtures/feeds/feed_a.json';
import feedB from './fixtures/feeds/feed_b.json';
import feedC from './fixtures/feeds/feed_c.json';
import feedD from './fixtures/feeds/feed_d.json';
import type { SandboxFake } from './fake';

const PREFIX = '/feeds';
// Four different document shapes, as the feed parser accepts them (docs/content.md).
const documents: Record<string, unknown> = { feed_a: feedA, feed_b: feedB, feed_c: feedC, feed_d: feedD };

/** The newsletter feed service: one JSON document per feed id. */
export function createFeedsFake(): SandboxFake {
  return {
    name: 'feeds',
    mount(router) {
      router.get(`${PREFIX}/:feed`, (ctx) => {
        const document = Object.hasOwn(documents, ctx.params.feed!) ? documents[ctx.params.feed!] : undefined;
        ctx.status = document ? 200 : 404;
        ctx.body = document ?? { error: 'unknown feed' };
      });
    },
    configure: ({ baseUrl }) => ({ newsletter: { feed_base_url: `${baseUrl}${PREFIX}` } }),
  };
}
