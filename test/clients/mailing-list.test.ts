import { testCtx } from '../support/context';
import nock from 'nock';
import pino from 'pino';
import { createMailingListClient, subscribeUrl } from '../../src/clients/mailing-list';
import { isApiError } from '../../src/core/errors';
import subscribed from '../../src/sandbox/fixtures/mailing-list/subscribed.json';
import refused from '../../src/sandbox/fixtures/mailing-list/refused.json';
import { testConfig } from '../support/app';
import { useNock } from '../support/nock';

const ESP = 'http://esp.test';
const log = pino({ level: 'silent' });
const client = () => createMailingListClient(testConfig({ newsletter: { esp_url: `${ESP}/esp/` } }), log);

useNock();

describe('mailing-list client', () => {
  it('calls GET /tracker/securesub/email/{encoded email}/ml/{comma-joined ids} with the key in api_key', async () => {
    const scope = nock(ESP)
      .get('/esp/tracker/securesub/email/mario.rossi%2Bnews%40example.com/ml/101,102')
      .query({ api_key: 'key-head-a-123456' })
      .reply(200, subscribed);

    const outcome = await client().subscribe(testCtx, {
      email: 'mario.rossi+news@example.com',
      mlids: ['101', '102'],
      apiKey: 'key-head-a-123456',
    });

    expect(outcome).toEqual({ accepted: true, status: 200, message: 'Iscrizione registrata' });
    expect(scope.isDone()).toBe(true);
  });

  it('builds the path with the email as one encoded segment and no doubled slash', () => {
    expect(subscribeUrl('https://esp.example.com/', 'a/b@c.it', ['1'])).toBe(
      'https://esp.example.com/tracker/securesub/email/a%2Fb%40c.it/ml/1',
    );
  });

  it('takes a 2xx with an empty body as accepted', async () => {
    nock(ESP)
      .get(/\/ml\/7$/)
      .query(true)
      .reply(204);
    await expect(client().subscribe(testCtx, { email: 'a@b.it', mlids: ['7'], apiKey: 'k' })).resolves.toEqual({
      accepted: true,
      status: 204,
    });
  });

  it('takes a 2xx whose body reports an error as a refusal, with its message', async () => {
    nock(ESP)
      .get(/\/ml\/7$/)
      .query(true)
      .reply(200, refused);
    await expect(client().subscribe(testCtx, { email: 'a@b.it', mlids: ['7'], apiKey: 'k' })).resolves.toEqual({
      accepted: false,
      status: 200,
      message: 'Invalid api key',
    });
  });

  it('takes success false as a refusal', async () => {
    nock(ESP)
      .get(/\/ml\/7$/)
      .query(true)
      .reply(200, { success: false });
    await expect(client().subscribe(testCtx, { email: 'a@b.it', mlids: ['7'], apiKey: 'k' })).resolves.toMatchObject({
      accepted: false,
    });
  });

  it('turns an error status into upstream_error carrying the status', async () => {
    nock(ESP)
      .get(/\/ml\/7$/)
      .query(true)
      .reply(401, refused);
    const err = await client()
      .subscribe(testCtx, { email: 'a@b.it', mlids: ['7'], apiKey: 'k' })
      .catch((e: unknown) => e);
    expect(isApiError(err) && err.reason).toBe('upstream_error');
    expect(isApiError(err) && err.data.upstream_status).toBe(401);
  });
});
