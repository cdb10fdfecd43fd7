import { testCtx } from '../../support/context';
import pino from 'pino';
import type { Config } from '../../../src/core/config/schema';
import { isApiError } from '../../../src/core/errors';
import { createMemoryOtpStore } from '../../../src/domain/otp/memory-store';
import { createOtpService, type OtpService } from '../../../src/domain/otp/service';
import type { OtpStore } from '../../../src/domain/otp/store';
import { testConfig } from '../../support/app';
import { createMailer } from '../../../src/clients/mailer';
import { createAbuseLimits } from '../../../src/domain/limits/abuse-limits';
import { createMemoryRateLimiter } from '../../../src/domain/limits/rate-limiter';

const log = pino({ level: 'silent' });

/** The service with a spied memory store and a fake SMS client that accepts or refuses. */
function service(config: Config, smsAccepts = true) {
  const store: OtpStore = createMemoryOtpStore({ maxRecords: 100 });
  const issue = jest.spyOn(store, 'issue');
  const revert = jest.spyOn(store, 'revert');
  const verify = jest.spyOn(store, 'verify');
  const sent: Array<{ to: string; body: string }> = [];
  const sms = {
    configured: config.sms.api_url !== '' && config.sms.api_key !== '',
    send: jest.fn(async (_ctx: unknown, message: { to: string; body: string }) => {
      if (!smsAccepts) throw new Error('refused');
      sent.push(message);
      return { status: 200, durationMs: 1 };
    }),
  };
  let now = 1_900_000_000_000;
  const limits = createAbuseLimits(config, createMemoryRateLimiter(), () => now);
  const otp: OtpService = createOtpService(config, {
    log,
    otpLog: log,
    now: () => now,
    secret: 's3cret',
    store,
    sms,
    mailer: createMailer(config, log),
    limits,
  });
  return { otp, issue, revert, verify, sent, tick: (ms: number) => (now += ms) };
}

const smsOn = { sms: { api_url: 'https://sms.example.test/send', api_key: 'k' } };
const reasonOf = (err: unknown) => (isApiError(err) ? err.reason : err);

describe('OtpService', () => {
  it('stores nothing when no chosen channel is configured', async () => {
    const s = service(testConfig());
    await expect(s.otp.generate(testCtx, { key: '+393331234567' }).catch(reasonOf)).resolves.toBe(
      'channel_not_configured',
    );
    expect(s.issue).not.toHaveBeenCalled();
  });

  it('stores nothing and sends nothing for an unparseable phone', async () => {
    const s = service(testConfig(smsOn));
    await expect(s.otp.generate(testCtx, { key: 'a@b.test', phone: 'call me' }).catch(reasonOf)).resolves.toBe(
      'invalid_request',
    );
    expect(s.issue).not.toHaveBeenCalled();
    expect(s.sent).toHaveLength(0);
  });

  it('reverts the record when every channel refused the code', async () => {
    const s = service(testConfig(smsOn), false);
    await expect(s.otp.generate(testCtx, { key: '+393331234567' }).catch(reasonOf)).resolves.toBe('delivery_failed');
    expect(s.revert).toHaveBeenCalledTimes(1);
  });

  it('verifies the code it sent for the normalised key, once', async () => {
    const s = service(testConfig(smsOn));
    await s.otp.generate(testCtx, { key: '+39 333 1234567' });
    const code = /\d{6}/.exec(s.sent[0]!.body)![0];
    expect(await s.otp.verify(testCtx, { key: '393331234567', code })).toEqual({
      outcome: 'ok',
      reached: { phone: '+393331234567' },
      sentAt: expect.any(Number),
    });
    expect(await s.otp.verify(testCtx, { key: '393331234567', code })).toEqual({ outcome: 'invalid' });
  });

  it('looks a key written in E.164 up as given, and one that only looks so under its normalised form', async () => {
    const s = service(testConfig({ ...smsOn, sms: { ...smsOn.sms, allowed_regions: ['IT', 'FR'] } }));
    await s.otp.generate(testCtx, { key: '+33612345678' });
    const code = /\d{6}/.exec(s.sent[0]!.body)![0];
    const wrong = code === '000000' ? '111111' : '000000';
    const keysLookedUp = () => s.verify.mock.calls.splice(0).map(([key]) => key);
    expect(await s.otp.verify(testCtx, { key: '+33612345678', code: wrong })).toEqual({ outcome: 'invalid' });
    expect(keysLookedUp()).toEqual(['+33612345678']);
    // "+330612345678" is written like E.164 but carries France's trunk 0: it is "+33612345678".
    expect(await s.otp.verify(testCtx, { key: '+330612345678', code })).toEqual({
      outcome: 'ok',
      reached: { phone: '+33612345678' },
      sentAt: expect.any(Number),
    });
    expect(keysLookedUp()).toEqual(['+330612345678', '+33612345678']);
  });

  it('counts a wrong guess once whichever spelling of the key it comes under', async () => {
    const config = testConfig({
      ...smsOn,
      otp: { max_attempts: 3 },
      sms: { ...smsOn.sms, allowed_regions: ['IT', 'FR'] },
    });
    const s = service(config);
    await s.otp.generate(testCtx, { key: '+33612345678' });
    const code = /\d{6}/.exec(s.sent[0]!.body)![0];
    const wrong = code === '000000' ? '111111' : '000000';
    // Two wrong guesses (one under each spelling) leave the third, right, guess standing.
    expect((await s.otp.verify(testCtx, { key: '+330612345678', code: wrong })).outcome).toBe('invalid');
    expect((await s.otp.verify(testCtx, { key: '+33612345678', code: wrong })).outcome).toBe('invalid');
    expect((await s.otp.verify(testCtx, { key: '+330612345678', code })).outcome).toBe('ok');
  });

  it('answers invalid for an E.164 key with no code and for one that is not a valid number', async () => {
    const s = service(testConfig(smsOn));
    expect(await s.otp.verify(testCtx, { key: '+393331234567', code: '123456' })).toEqual({ outcome: 'invalid' });
    expect(await s.otp.verify(testCtx, { key: '+3903331234567', code: '123456' })).toEqual({ outcome: 'invalid' });
  });

  it('throws the contract’s errors from verifyOrThrow', async () => {
    const s = service(testConfig(smsOn));
    await s.otp.generate(testCtx, { key: '+393331234567' });
    const failure = await s.otp
      .verifyOrThrow(testCtx, { key: '+393331234567', code: 'nope' })
      .catch((err: unknown) => err);
    expect(isApiError(failure) && [failure.reason, failure.message, failure.data]).toEqual([
      'invalid',
      'OTP non valido.',
      { valid: false },
    ]);
    s.tick(300_000);
    const expired = await s.otp
      .verifyOrThrow(testCtx, { key: '+393331234567', code: 'nope' })
      .catch((err: unknown) => err);
    expect(isApiError(expired) && [expired.reason, expired.message]).toEqual([
      'expired',
      'OTP scaduto. Richiedi un nuovo codice.',
    ]);
  });

  it('names the request fields its caller uses in invalid_request issues', async () => {
    const s = service(testConfig(smsOn));
    const failure = await s.otp
      .generate(testCtx, { key: '12345', fields: { key: 'identifier' } })
      .catch((err: unknown) => err);
    expect(isApiError(failure) && failure.data.issues).toEqual([
      { path: 'identifier', message: 'not a valid phone number' },
    ]);
  });
});
