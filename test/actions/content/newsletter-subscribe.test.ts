import nock from 'nock';
import subscribed from '../../../src/sandbox/fixtures/mailing-list/subscribed.json';
import refused from '../../../src/sandbox/fixtures/mailing-list/refused.json';
import { contentApp, ESP, KEYS, useNock } from './content-app';

useNock();

const EMAIL = 'mario.rossi@example.com';
const path = (mlids: string) => `/tracker/securesub/email/mario.rossi%40example.com/ml/${mlids}`;

describe('newsletter_subscribe', () => {
  it('calls the mailing list once per headline with its key, list ids de-duplicated, and answers per headline with the key masked', async () => {
    const scope = nock(ESP)
      .get(path('101,102'))
      .query({ api_key: KEYS.head_a })
      .reply(200, subscribed)
      .get(path('301'))
      .query({ api_key: KEYS.head_c })
      .reply(200, subscribed);

    const res = await contentApp().post('newsletter_subscribe', {
      email: EMAIL,
      selections: [
        { feed: 'feed_a', mlid: '101' },
        { testata: 'head_c', mlid: '301' },
        { feed: 'feed_a', testata: 'head_a', mlid: '102' },
        { testata: 'head_a', mlid: '101' },
      ],
    });

    expect(scope.isDone()).toBe(true);
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: {
        email: EMAIL,
        headlines: {
          head_a: {
            testata: 'head_a',
            feed: 'feed_a',
            ok: true,
            outcome: 'subscribed',
            upstream_status: 200,
            message: 'Iscrizione registrata',
            sent: { email: EMAIL, mlids: ['101', '102'], api_key: '***' },
          },
          head_c: {
            testata: 'head_c',
            feed: 'feed_c',
            ok: true,
            outcome: 'subscribed',
            upstream_status: 200,
            message: 'Iscrizione registrata',
            sent: { email: EMAIL, mlids: ['301'], api_key: '***' },
          },
        },
        subscribed: ['head_a', 'head_c'],
        failed: [],
      },
    });
    expect(JSON.stringify(res.body)).not.toContain(KEYS.head_a);
  });

  it('calls the headlines in parallel', async () => {
    let inFlight = 0;
    let most = 0;
    const slowReply = (_uri: string, _body: nock.Body, done: (err: null, result: nock.ReplyFnResult) => void) => {
      most = Math.max(most, ++inFlight);
      setTimeout(() => {
        inFlight--;
        done(null, [200, subscribed]);
      }, 50);
    };
    nock(ESP)
      .get(/\/ml\/\d+$/)
      .query(true)
      .times(3)
      .reply(slowReply);

    const res = await contentApp().post('newsletter_subscribe', {
      email: EMAIL,
      selections: [
        { feed: 'feed_a', mlid: '1' },
        { feed: 'feed_b', mlid: '2' },
        { feed: 'feed_c', mlid: '3' },
      ],
    });

    expect(res.body.data.subscribed).toEqual(['head_a', 'head_b', 'head_c']);
    expect(most).toBe(3);
  });

  it('accepts the single form testata with comma-separated mlids', async () => {
    const scope = nock(ESP).get(path('201,202')).query({ api_key: KEYS.head_b }).reply(200, subscribed);
    const res = await contentApp().post('newsletter_subscribe', {
      email: EMAIL,
      testata: 'head_b',
      mlids: '201, 202,201',
    });
    expect(scope.isDone()).toBe(true);
    expect(res.body.data.headlines.head_b.sent.mlids).toEqual(['201', '202']);
  });

  it('answers partial_failure naming the failed headlines when some succeed', async () => {
    nock(ESP).get(path('101')).query(true).reply(200, subscribed).get(path('201')).query(true).reply(500);

    const res = await contentApp().post('newsletter_subscribe', {
      email: EMAIL,
      selections: [
        { feed: 'feed_a', mlid: '101' },
        { feed: 'feed_b', mlid: '201' },
      ],
    });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: false,
      error: expect.any(String),
      data: { reason: 'partial_failure', subscribed: ['head_a'], failed: ['head_b'] },
    });
    expect(res.body.data.headlines.head_b).toMatchObject({
      ok: false,
      outcome: 'upstream_error',
      upstream_status: 500,
      sent: { mlids: ['201'] },
    });
  });

  it('answers subscription_failed when every headline fails', async () => {
    nock(ESP).get(path('101')).query(true).reply(401, refused).get(path('201')).query(true).reply(503);
    const res = await contentApp().post('newsletter_subscribe', {
      email: EMAIL,
      selections: [
        { feed: 'feed_a', mlid: '101' },
        { feed: 'feed_b', mlid: '201' },
      ],
    });
    expect(res.body.data).toMatchObject({
      reason: 'subscription_failed',
      subscribed: [],
      failed: ['head_a', 'head_b'],
    });
    expect(res.body.data.headlines.head_a).toMatchObject({ outcome: 'upstream_error', upstream_status: 401 });
    expect(res.body.data.headlines.head_b).toMatchObject({ outcome: 'upstream_error', upstream_status: 503 });
  });

  it('counts a refusal in a 200 body as a failed headline', async () => {
    nock(ESP).get(path('101')).query(true).reply(200, refused);
    const res = await contentApp().post('newsletter_subscribe', { email: EMAIL, testata: 'head_a', mlids: '101' });
    expect(res.body.data).toMatchObject({ reason: 'subscription_failed', failed: ['head_a'] });
    expect(res.body.data.headlines.head_a).toMatchObject({
      ok: false,
      outcome: 'refused',
      upstream_status: 200,
      message: 'Invalid api key',
    });
  });

  it('answers not_configured without a call when esp_url is empty', async () => {
    const res = await contentApp({ newsletter: { esp_url: '' } }).post('newsletter_subscribe', {
      email: EMAIL,
      testata: 'head_a',
      mlids: '1',
    });
    expect(res.body.data).toEqual({ reason: 'not_configured', key: 'newsletter.esp_url' });
  });

  describe('refuses before any call, naming the item', () => {
    it.each([
      ['an invalid email', { email: 'not-an-email', testata: 'head_a', mlids: '1' }, 'email'],
      ['an unknown feed', { email: EMAIL, selections: [{ feed: 'feed_z', mlid: '1' }] }, 'selections.0.feed'],
      [
        'an unknown headline',
        {
          email: EMAIL,
          selections: [
            { feed: 'feed_a', mlid: '1' },
            { testata: 'head_z', mlid: '2' },
          ],
        },
        'selections.1.testata',
      ],
      ['an empty mlid', { email: EMAIL, selections: [{ feed: 'feed_a', mlid: ' ' }] }, 'selections.0.mlid'],
      [
        'a non-numeric mlid',
        {
          email: EMAIL,
          selections: [
            { feed: 'feed_a', mlid: '1' },
            { feed: 'feed_a', mlid: '1' },
            { feed: 'feed_a', mlid: 'abc' },
          ],
        },
        'selections.2.mlid',
      ],
      ['an empty id in mlids', { email: EMAIL, testata: 'head_a', mlids: '1,,2' }, 'mlids.1'],
      ['a non-numeric id in mlids', { email: EMAIL, testata: 'head_a', mlids: '1,x' }, 'mlids.1'],
      ['a selection with neither feed nor testata', { email: EMAIL, selections: [{ mlid: '1' }] }, 'selections.0'],
      [
        'a feed and a testata that are not a pair',
        { email: EMAIL, selections: [{ feed: 'feed_a', testata: 'head_b', mlid: '1' }] },
        'selections.0.testata',
      ],
      [
        'a headline with no configured key, by feed',
        {
          email: EMAIL,
          selections: [
            { feed: 'feed_a', mlid: '1' },
            { feed: 'feed_d', mlid: '4' },
          ],
        },
        'selections.1.feed',
      ],
      ['a headline with no configured key, by testata', { email: EMAIL, testata: 'head_d', mlids: '4' }, 'testata'],
      ['testata without mlids', { email: EMAIL, testata: 'head_a' }, 'mlids'],
      ['mlids without testata', { email: EMAIL, mlids: '1' }, 'testata'],
      ['an empty selections list', { email: EMAIL, selections: [] }, 'selections'],
      ['no selection at all', { email: EMAIL }, ''],
    ])('%s', async (_case, body, issuePath) => {
      const res = await contentApp().post('newsletter_subscribe', body);
      expect(res.body.success).toBe(false);
      expect(res.body.data.reason).toBe('invalid_request');
      expect(res.body.data.issues).toContainEqual({ path: issuePath, message: expect.any(String) });
    });
  });
});
