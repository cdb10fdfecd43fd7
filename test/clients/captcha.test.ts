import nock from 'nock';
import pino from 'pino';
import request from 'supertest';
import { createCaptchaClient } from '../../src/clients/captcha';
import { isApiError } from '../../src/core/errors';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { testApp, testConfig, testDeps } from '../support/app';
import { testCtx } from '../support/context';
import { useNock } from '../support/nock';

const log = pino({ level: 'silent' });
const hosted = (provider: 'turnstile' | 'hcaptcha', extra: Record<string, unknown> = {}) =>
  testConfig({
    challenge: { provider, site_key: 'site-key-1', secret_key: 'secret-key-1', timeout_seconds: 1, ...extra },
  });
const ctx = { ...testCtx, ip: '203.0.113.7' };

describe('Turnstile and hCaptcha siteverify clients', () => {
  useNock();

  it('asks Turnstile with a form of secret, response and remoteip, and reads action and cdata', async () => {
    const scope = nock('https://challenges.cloudflare.com', {
      reqheaders: { 'content-type': /application\/x-www-form-urlencoded/ },
    })
      .post('/turnstile/v0/siteverify', { secret: 'secret-key-1', response: 'token-1', remoteip: '203.0.113.7' })
      .reply(200, {
        success: true,
        'error-codes': [],
        action: 'otp_generate',
        cdata: 'abc',
        hostname: 'login.example.com',
      });
    const answer = await createCaptchaClient(hosted('turnstile'), log)!.verify(ctx, 'token-1');
    expect(answer).toEqual({ success: true, errors: [], action: 'otp_generate', cdata: 'abc' });
    expect(scope.isDone()).toBe(true);
  });

  it('asks hCaptcha with its site key beside the secret, and reads its error codes', async () => {
    const scope = nock('https://api.hcaptcha.com')
      .post('/siteverify', {
        secret: 'secret-key-1',
        response: 'token-2',
        remoteip: '203.0.113.7',
        sitekey: 'site-key-1',
      })
      .reply(200, { success: false, 'error-codes': ['invalid-input-response'] });
    expect(await createCaptchaClient(hosted('hcaptcha'), log)!.verify(ctx, 'token-2')).toEqual({
      success: false,
      errors: ['invalid-input-response'],
    });
    expect(scope.isDone()).toBe(true);
  });

  it('calls challenge.verify_url when it is set', async () => {
    const scope = nock('https://captcha.example.test').post('/verify').reply(200, { success: true });
    await createCaptchaClient(hosted('turnstile', { verify_url: 'https://captcha.example.test/verify' }), log)!.verify(
      ctx,
      't',
    );
    expect(scope.isDone()).toBe(true);
  });

  it('turns a provider failure, a reply that is not theirs, or no answer in time into upstream_error', async () => {
    const client = createCaptchaClient(hosted('turnstile'), log)!;
    nock('https://challenges.cloudflare.com').post('/turnstile/v0/siteverify').reply(500, 'boom');
    nock('https://challenges.cloudflare.com').post('/turnstile/v0/siteverify').reply(200, { ok: 'yes' });
    nock('https://challenges.cloudflare.com')
      .post('/turnstile/v0/siteverify')
      .delay(1500)
      .reply(200, { success: true });
    for (let i = 0; i < 3; i += 1) {
      const failure = await client.verify(ctx, 't').catch((err: unknown) => err);
      expect(isApiError(failure) && failure.reason).toBe('upstream_error');
    }
  });

  it('is not made for the self-hosted proof of work, and the hosted ones need both keys', () => {
    expect(createCaptchaClient(testConfig(), log)).toBeUndefined();
    expect(() => testConfig({ challenge: { provider: 'hcaptcha' } })).toThrow(
      /challenge\.site_key: is required with provider hcaptcha[\s\S]*challenge\.secret_key: is required/,
    );
  });
});

describe('the hosted challenges against the sandbox fakes', () => {
  let sandbox: Sandbox;
  afterEach(async () => sandbox?.close());

  async function appWith(provider: 'turnstile' | 'hcaptcha') {
    sandbox = await startSandbox(
      testConfig({
        otp: { debug: true },
        challenge: { mode: 'always', provider, site_key: 'site-key-1', secret_key: 'secret-key-1' },
      }),
      log,
    );
    const app = testApp(testDeps(sandbox.config)).callback();
    const post = (body: Record<string, unknown>) =>
      request(app)
        .post('/otp_generate')
        .send(body)
        .then((r) => r.body);
    const token = (query: Record<string, string>) =>
      request(sandbox.baseUrl)
        .get('/captcha/token')
        .query(query)
        .then((r) => r.body.token as string);
    return { post, token };
  }

  it('Turnstile: the challenge names the site key, action and identifier data; a token for them buys one send, once', async () => {
    const { post, token } = await appWith('turnstile');
    const asked = await post({ uid: 'anna@example.com' });
    expect(asked.data).toEqual({
      reason: 'challenge_required',
      challenge: { provider: 'turnstile', site_key: 'site-key-1', action: 'otp_generate', cdata: expect.any(String) },
    });
    const { action, cdata } = asked.data.challenge;
    const good = await token({ action, cdata });
    expect((await post({ uid: 'anna@example.com', challenge: good })).success).toBe(true);
    expect((await post({ uid: 'anna@example.com', challenge: good })).data.solution).toBe('spent');
    // A token made for another identifier's challenge, or another action.
    expect(
      (await post({ uid: 'anna@example.com', challenge: await token({ action, cdata: 'someone-else' }) })).data
        .solution,
    ).toBe('mismatch');
    expect(
      (await post({ uid: 'anna@example.com', challenge: await token({ action: 'FeLogin', cdata }) })).data.solution,
    ).toBe('mismatch');
    expect((await post({ uid: 'anna@example.com', challenge: 'made-up' })).data.solution).toBe('invalid');
  });

  it('hCaptcha: a token buys one send, once', async () => {
    const { post, token } = await appWith('hcaptcha');
    const asked = await post({ uid: 'anna@example.com' });
    expect(asked.data.challenge).toEqual({ provider: 'hcaptcha', site_key: 'site-key-1', action: 'otp_generate' });
    const good = await token({});
    expect((await post({ uid: 'anna@example.com', challenge: good })).success).toBe(true);
    expect((await post({ uid: 'anna@example.com', challenge: good })).data.solution).toBe('spent');
  });
});
