import { testCtx } from '../support/context';
import nock from 'nock';
import pino from 'pino';
import { createSmsClient } from '../../src/clients/sms';
import { isApiError } from '../../src/core/errors';
import { testConfig } from '../support/app';
import { useNock } from '../support/nock';

const log = pino({ level: 'silent' });
const config = testConfig({
  sms: { api_url: 'https://sms.example.test/v1/send', api_key: 'sms-key-123456', sender: 'Login' },
});

describe('SMS client', () => {
  useNock();

  it('posts receiver, body and sender as JSON with the Bearer key', async () => {
    const scope = nock('https://sms.example.test', {
      reqheaders: { authorization: 'Bearer sms-key-123456', 'content-type': /application\/json/ },
    })
      .post('/v1/send', { receiver: '+393331234567', body: 'ciao 123456', sender: 'Login' })
      .reply(200, { id: 'm1' });
    const result = await createSmsClient(config, log).send(testCtx, { to: '+393331234567', body: 'ciao 123456' });
    expect(result.status).toBe(200);
    expect(scope.isDone()).toBe(true);
  });

  it('turns a gateway error into upstream_error', async () => {
    nock('https://sms.example.test').post('/v1/send').reply(503, 'down');
    const failure = await createSmsClient(config, log)
      .send(testCtx, { to: '+393331234567', body: 'x' })
      .catch((err: unknown) => err);
    expect(isApiError(failure) && failure.reason).toBe('upstream_error');
  });

  it('is configured only with both api_url and api_key', () => {
    expect(createSmsClient(config, log).configured).toBe(true);
    expect(createSmsClient(testConfig({ sms: { api_url: 'https://sms.example.test/v1/send' } }), log).configured).toBe(
      false,
    );
    expect(createSmsClient(testConfig({ sms: { api_key: 'k' } }), log).configured).toBe(false);
  });
});
