import { createFeedsFake } from '../../src/sandbox/feeds';
import { createMailingListFake } from '../../src/sandbox/mailing-list';
import { createRecommendationsFake } from '../../src/sandbox/recommendations';
import widget from '../../src/sandbox/fixtures/recommendations/widget.json';
import { useSandboxApp } from '../support/sandbox-app';

const app = useSandboxApp([createMailingListFake, createFeedsFake, createRecommendationsFake]);

describe('content actions against the sandbox fakes', () => {
  it('newsletter_feed lists the four feeds', async () => {
    const res = await app.call('newsletter_feed', {});
    expect(res.body.success).toBe(true);
    expect(Object.keys(res.body.data.feeds)).toEqual(['feed_a', 'feed_b', 'feed_c', 'feed_d']);
    expect(res.body.data.errors).toEqual({});
    expect(res.body.data.count).toBe(10);
  });

  it('newsletter_subscribe subscribes and the outbox shows one message per headline', async () => {
    const res = await app.call('newsletter_subscribe', {
      email: 'lettore@example.com',
      selections: [
        { feed: 'feed_a', mlid: '101' },
        { feed: 'feed_d', mlid: '401' },
      ],
    });
    expect(res.body.success).toBe(true);
    expect(res.body.data.subscribed).toEqual(['head_a', 'head_d']);
    const sent = app.sandbox.outbox.list('newsletter');
    expect(sent.map((m) => [m.to, m.body]).sort()).toEqual([
      ['lettore@example.com', expect.stringContaining('101')],
      ['lettore@example.com', expect.stringContaining('401')],
    ]);
  });

  it('recommendations answers the widget items', async () => {
    const res = await app.call('recommendations', { url: 'https://www.example.com/articolo', udi: 'reader-1' });
    expect(res.body).toEqual({ response: { items: widget.response.items } });
  });
});
