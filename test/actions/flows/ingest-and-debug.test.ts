import { useNock } from '../../support/nock';
import { fixture, intercept, paths } from '../identity/support';
import { smsGateway, useSmtp } from '../otp/harness';
import type { OtpService } from '../../../src/domain/otp/service';
import { collector, flowsApp, MARIO, searchReply } from './support';

describe('Fe* login ingest, debug trace and time limit', () => {
  useNock();
  const smtp = useSmtp();

  async function phoneLogin(app: ReturnType<typeof flowsApp>) {
    const sms = smsGateway();
    await app.call('FeLogin', { identifier: MARIO.phone });
    intercept('POST', paths.search, 200, searchReply(MARIO));
    intercept('POST', paths.token, 200, fixture('token'));
    return app.call('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: sms.codes()[0] });
  }

  it('completes the login at 90 with a token when the collector is down; the ingest is counted as failed', async () => {
    const app = flowsApp(smtp.port());
    const down = collector(503);
    const res = await phoneLogin(app);
    expect(res.body.data).toMatchObject({ next_step: 90, access_token: expect.any(String) });
    expect(await app.deps.loginIngest.drain(2000)).toBe(true);
    expect(down.ingested).toHaveLength(1);
    expect(app.deps.loginIngest.stats()).toMatchObject({ delivered: 0, failed: 1 });
  });

  it('with debug on, lists the steps and calls in order, login_ingestion included, beside the upstream calls', async () => {
    const app = flowsApp(smtp.port(), { debug: true });
    collector();
    const res = await phoneLogin(app);
    const trace = (res.body.debug as Array<{ step: string }>).map((entry) => entry.step);
    expect(trace).toEqual([
      'verifyOtp',
      'searchUserByPhone',
      'identity.user_search',
      'issueToken',
      'identity.token',
      'login_ingestion',
      'step_90',
    ]);
    await app.deps.loginIngest.drain(2000);
  });

  it('with debug on, a refusal carries the trace too', async () => {
    const app = flowsApp(smtp.port(), { debug: true });
    smsGateway();
    await app.call('FeLogin', { identifier: MARIO.phone });
    const res = await app.call('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: 'abcdef' });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid' }, debug: [{ step: 'verifyOtp' }] });
  });

  it('with debug off, answers no debug field', async () => {
    const app = flowsApp(smtp.port());
    collector();
    const res = await phoneLogin(app);
    expect(res.body).not.toHaveProperty('debug');
    expect(res.body).not.toHaveProperty('idp_debug');
    await app.deps.loginIngest.drain(2000);
  });

  it('answers upstream_error, never hangs, when an effect does not settle within the flow time limit', async () => {
    const stuck = { generate: () => new Promise<never>(() => {}) } as unknown as OtpService;
    const { call } = flowsApp(smtp.port(), { identity: { timeout_seconds: 1 } }, { otp: stuck });
    const started = Date.now();
    const res = await call('FeLogin', { identifier: MARIO.phone });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'upstream_error', upstream: 'login_flow' } });
    // identity.timeout_seconds is 1 here: the flow gets 1.5 s.
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
