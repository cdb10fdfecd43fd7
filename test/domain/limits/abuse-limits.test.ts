import nock from 'nock';
import { smsGateway, startApp, useNock, type Harness } from '../../actions/otp/harness';
import { BASE, fixture, identityApp, identityConfig } from '../../actions/identity/support';
import { createAbuseLimits } from '../../../src/domain/limits/abuse-limits';
import { createMemoryRateLimiter } from '../../../src/domain/limits/rate-limiter';
import { testConfig } from '../../support/app';

/* The abuse limits of issue 6 through the real app: 429, reason rate_limited, Retry-After, nothing sent. */

const phone = (n: number) => `+39333${String(1000000 + n)}`;

describe('abuse limits', () => {
  useNock();
  let app: Harness;
  afterEach(async () => {
    await app?.close();
  });

  it('refuses code sends from one IP over sends_per_ip_per_hour with 429, Retry-After and nothing sent', async () => {
    app = await startApp({ rate_limits: { sends_per_ip_per_hour: 3 } });
    const gateway = smsGateway();
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await app.post('otp_generate', { uid: phone(i) }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429]);
    const refused = answers[3]!;
    expect(refused.body).toMatchObject({
      success: false,
      error: expect.stringMatching(/^Troppe richieste\. Riprova tra \d+ secondi\.$/),
      data: { reason: 'rate_limited', retry_after: expect.any(Number), limit: 'sends_per_ip_per_hour' },
    });
    expect(Number(refused.headers['retry-after'])).toBe(refused.body.data.retry_after);
    expect(refused.body.data.retry_after).toBeGreaterThan(3500);
    expect(gateway.sent).toHaveLength(3);
  });

  it('refuses more codes for one identifier than sends_per_identifier_per_hour, counting only codes really issued', async () => {
    app = await startApp({ otp: { resend_cooldown_seconds: 1 }, rate_limits: { sends_per_identifier_per_hour: 2 } });
    const gateway = smsGateway();
    expect((await app.post('otp_generate', { uid: phone(1) })).status).toBe(200);
    // Refused by the cooldown: not counted against the identifier.
    expect((await app.post('otp_generate', { uid: phone(1) })).body.data.reason).toBe('already_sent');
    app.tick(1_000);
    expect((await app.post('otp_generate', { uid: phone(1) })).status).toBe(200);
    app.tick(1_000);
    const third = await app.post('otp_generate', { uid: phone(1) });
    expect(third.status).toBe(429);
    expect(third.body.data).toMatchObject({ reason: 'rate_limited', limit: 'sends_per_identifier_per_hour' });
    expect(gateway.sent).toHaveLength(2);
    // The refused code was withdrawn: the second code still verifies.
    const verified = await app.post('verify_otp', { email: phone(1), otp_code: gateway.codes()[1] });
    expect(verified.body.data.valid).toBe(true);
  });

  it('refuses verification attempts from one IP over verifies_per_ip_per_minute', async () => {
    app = await startApp({ rate_limits: { verifies_per_ip_per_minute: 2 } });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await app.post('verify_otp', { email: phone(i), otp_code: '123456' }));
    expect(answers.map((a) => a.body.data.reason)).toEqual(['invalid', 'invalid', 'rate_limited']);
    expect(answers[2]!.status).toBe(429);
    app.tick(60_000);
    expect((await app.post('verify_otp', { email: phone(9), otp_code: '123456' })).body.data.reason).toBe('invalid');
  });

  it('says in Retry-After the seconds left rounded up, so a client that waits that long is served', async () => {
    app = await startApp({ rate_limits: { verifies_per_ip_per_minute: 1 } });
    const verify = () => app.post('verify_otp', { email: phone(1), otp_code: '123456' });
    await verify();
    app.tick(1);
    const refused = await verify();
    expect([refused.status, refused.headers['retry-after']]).toEqual([429, '60']);
    app.tick(59_998);
    // A millisecond left is still a second to wait, never 0.
    expect((await verify()).headers['retry-after']).toBe('1');
    app.tick(1);
    expect((await verify()).status).toBe(200);
  });

  it('counts per client IP from X-Forwarded-For only behind server.trust_proxy_hops proxies', async () => {
    app = await startApp({ server: { trust_proxy_hops: 1 }, rate_limits: { verifies_per_ip_per_minute: 1 } });
    const from = (ip: string) =>
      app.post('verify_otp', { email: phone(1), otp_code: '123456' }).set('X-Forwarded-For', ip);
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.2')).status).toBe(200);
    expect((await from('203.0.113.1')).status).toBe(429);
  });

  it('ignores X-Forwarded-For with server.trust_proxy_hops at 0 (the default)', async () => {
    app = await startApp({ rate_limits: { verifies_per_ip_per_minute: 1 } });
    const from = (ip: string) =>
      app.post('verify_otp', { email: phone(1), otp_code: '123456' }).set('X-Forwarded-For', ip);
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.2')).status).toBe(429);
  });

  it('applies no limit when rate_limits.enabled is false', async () => {
    app = await startApp({ rate_limits: { enabled: false, verifies_per_ip_per_minute: 1 } });
    for (let i = 0; i < 3; i++)
      expect((await app.post('verify_otp', { email: phone(1), otp_code: '123456' })).status).toBe(200);
  });

  it('counts refusals in /metrics', async () => {
    app = await startApp({ rate_limits: { verifies_per_ip_per_minute: 1 } });
    await app.post('verify_otp', { email: phone(1), otp_code: '123456' });
    await app.post('verify_otp', { email: phone(1), otp_code: '123456' });
    expect(await app.deps.metrics.render()).toMatch(
      /lfa_rate_limit_refusals_total\{limit="verifies_per_ip_per_minute"\} 1/,
    );
  });
});

describe('lookups that reveal whether an account exists', () => {
  it('are limited per IP when answered without a proof, and not limited with one', async () => {
    const { call, proof } = identityApp(identityConfig({ rate_limits: { lookups_per_ip_per_minute: 2 } }));
    nock(BASE).persist().post('/api/v3/publisher/user/search').reply(200, fixture('user-search'));
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await call('search_user', { phone: '+393331234567' }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(answers[2]!.body.data).toMatchObject({ reason: 'rate_limited', limit: 'lookups_per_ip_per_minute' });
    const withProof = await call('search_user', { phone: '+393331234567', proof: proof({ phone: '+393331234567' }) });
    expect(withProof.status).toBe(200);
    expect(withProof.body.meta.found).toBe(true);
  });
});

describe('work that serves no request (no client address)', () => {
  it('is counted on no shared client budget: background work never refuses itself', async () => {
    const limits = createAbuseLimits(
      testConfig({
        rate_limits: { sends_per_ip_per_hour: 1, verifies_per_ip_per_minute: 1, registrations_per_ip_per_hour: 1 },
      }),
      createMemoryRateLimiter(),
      () => 1_900_000_000_000,
    );
    for (let i = 0; i < 3; i++) {
      await expect(limits.sendFromIp(undefined)).resolves.toBeUndefined();
      await expect(limits.verifyFromIp(undefined)).resolves.toBeUndefined();
      await expect(limits.registration(undefined)).resolves.toBeUndefined();
    }
    // One client's budget is its own all the same.
    await limits.verifyFromIp('203.0.113.7');
    await expect(limits.verifyFromIp('203.0.113.7')).rejects.toMatchObject({ reason: 'rate_limited' });
  });
});

describe('password logins counted per email', () => {
  it('count every spelling of one inbox, spaces around it included, on one budget', async () => {
    const limits = createAbuseLimits(
      testConfig({ rate_limits: { password_logins_per_email: 2, password_logins_per_ip: 100 } }),
      createMemoryRateLimiter(),
      () => 1_900_000_000_000,
    );
    await limits.passwordLogin('203.0.113.7', 'mario.rossi@example.com');
    await limits.passwordLogin('203.0.113.8', ' Mario.Rossi@example.com ');
    await expect(limits.passwordLogin('203.0.113.9', 'mario.rossi+x@example.com\t')).rejects.toMatchObject({
      reason: 'rate_limited',
      data: { limit: 'password_logins_per_email' },
    });
  });

  it('counts a password login over its window: refused within it, with the time left, and allowed once it has passed', async () => {
    const clock = { now: 1_900_000_000_000 };
    const limits = createAbuseLimits(
      testConfig({
        rate_limits: { password_logins_per_email: 1, password_logins_per_ip: 100, password_login_window_seconds: 600 },
      }),
      createMemoryRateLimiter(),
      () => clock.now,
    );
    await limits.passwordLogin('203.0.113.7', 'mario.rossi@example.com');
    clock.now += 300_000;
    await expect(limits.passwordLogin('203.0.113.7', 'mario.rossi@example.com')).rejects.toMatchObject({
      reason: 'rate_limited',
      data: { limit: 'password_logins_per_email', retry_after: 300 },
    });
    clock.now += 300_000;
    await expect(limits.passwordLogin('203.0.113.7', 'mario.rossi@example.com')).resolves.toBeUndefined();
  });

  it('limits passkey logins per client and per credential, each its own budget', async () => {
    const limits = createAbuseLimits(
      testConfig({ rate_limits: { verifies_per_ip_per_minute: 1, passkey_logins_per_credential_per_hour: 1 } }),
      createMemoryRateLimiter(),
      () => 1_900_000_000_000,
    );
    await limits.passkeyLogin('203.0.113.7', 'credential-a');
    await expect(limits.passkeyLogin('203.0.113.8', 'credential-a')).rejects.toMatchObject({
      data: { limit: 'passkey_logins_per_credential_per_hour' },
    });
    await limits.passkeyLogin('203.0.113.9', 'credential-b');
    await expect(limits.passkeyLogin('203.0.113.9', 'credential-c')).rejects.toMatchObject({
      data: { limit: 'verifies_per_ip_per_minute' },
    });
  });

  it('counts no code to a receiver when the limits are off, nor to a receiver it cannot name', async () => {
    const make = (enabled: boolean) =>
      createAbuseLimits(
        testConfig({ rate_limits: { enabled, sends_per_recipient: 1, sends_per_identifier_per_hour: 1 } }),
        createMemoryRateLimiter(),
        () => 1_900_000_000_000,
      );
    const off = make(false);
    for (let i = 0; i < 3; i++) await expect(off.sendToIdentifier('+393331234567')).resolves.toBeUndefined();
    const on = make(true);
    for (let i = 0; i < 3; i++) await expect(on.sendToIdentifier('')).resolves.toBeUndefined();
    await on.sendToIdentifier('+393331234567');
    await expect(on.sendToIdentifier('+393331234567')).rejects.toMatchObject({ reason: 'rate_limited' });
  });
});
