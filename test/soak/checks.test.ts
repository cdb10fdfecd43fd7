import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import { loadConfig } from '../../src/core/config/load';
import { SANDBOX_COLLECTOR_TOKEN } from '../../src/sandbox/collector';
import { SANDBOX_SMS_KEY } from '../../src/sandbox/sms';
import { post } from '../../scripts/soak/client';
import { Tally, verdict } from '../../scripts/soak/tally';
import { startUpstreams, type SoakUpstreams } from '../../scripts/soak/upstreams';
import { freePort } from '../support/ports';

/*
 * The soak's own checks (scripts/soak): what it counts as unexpected, how it reads codes and
 * ingests from the fakes, and that every broken "must be 0" figure fails the run. The soak
 * itself runs in the test command (`npm run soak -- --smoke`) and exits 1 on a violation.
 */

const LAST_LINE = /^soak: \d+ journeys, \d+ double-accepted, \d+ lost ingests, \d+ unexpected 5xx, recovered in (\d+\.\d\d|never) s$/;
const clean = { codesIssued: 10, ingestsExpected: 4, lostIngests: 0, redisRestarted: true, instanceReplaced: true };

function cleanTally(): Tally {
  const tally = new Tally();
  tally.journeyStarted('phone_login');
  tally.journeyCompleted('phone_login');
  tally.redisDownAt = 1_000;
  tally.redisUpAt = 4_000;
  tally.answered(4_100, 4_600, true);
  return tally;
}

describe('soak verdict', () => {
  it('passes a run where every figure holds, with the closing line in its fixed form', () => {
    const result = verdict(cleanTally(), clean);
    expect(result.violations).toEqual([]);
    expect(result.last).toMatch(LAST_LINE);
    expect(result.last).toBe('soak: 1 journeys, 0 double-accepted, 0 lost ingests, 0 unexpected 5xx, recovered in 0.60 s');
  });

  it.each([
    ['a code accepted twice', (t: Tally) => (t.codes.doubleAccepted = 1), {}, /codes accepted twice: 1/],
    ['a wrong code accepted', (t: Tally) => (t.codes.wrongAccepted = 2), {}, /wrong or replaced codes accepted: 2/],
    ['a lost ingest', () => undefined, { lostIngests: 3 }, /lost ingests: 3/],
    ['an unexpected answer', (t: Tally) => t.unexpected('FeLogin answered 500'), {}, /unexpected answers .*: 1/],
    ['a journey failed with no fault', (t: Tally) => t.journeyFailed('email_login', 'FeLogin refused invalid', ''), {}, /journeys failed without a fault: 1/],
    ['no Redis restart', () => undefined, { redisRestarted: false }, /Redis was not restarted/],
    ['no instance replaced', () => undefined, { instanceReplaced: false }, /no instance was killed/],
  ])('fails the run on %s', (_name, spoil, figures, message) => {
    const tally = cleanTally();
    spoil(tally);
    const result = verdict(tally, { ...clean, ...figures });
    expect(result.violations.join('\n')).toMatch(message);
    expect(result.last).toMatch(LAST_LINE);
  });

  it('passes a pumping campaign blocked under the ceiling, and reports it', () => {
    const result = verdict(cleanTally(), { ...clean, pumping: { asked: 60, blocked: 40, minSends: 10, smsSpent: 10, blockedAfterSeconds: 1.5 } });
    expect(result.violations).toEqual([]);
    expect(result.lines).toContain('pumping: 60 codes asked to one range, 10 SMS spent on it, 40 refused as blocked, the first 1.5 s into the campaign');
  });

  it.each([
    ['25 SMS or more spent on the pumped range', { asked: 60, blocked: 10, minSends: 10, smsSpent: 25 }, /25 SMS spent on the pumped range \(must be under 25\)/],
    ['a range that ran past the time its block was due and was never blocked', { asked: 60, blocked: 0, minSends: 10, smsSpent: 12, blockDueAfterSeconds: 20, ranSeconds: 30 }, /range never blocked \(due after 20 s\)/],
  ])('fails the run on %s', (_name, pumping, message) => {
    expect(verdict(cleanTally(), { ...clean, pumping }).violations.join('\n')).toMatch(message);
  });

  it('does not ask a campaign cut short by the faults or the graces to have met the block', () => {
    expect(verdict(cleanTally(), { ...clean, pumping: { asked: 30, blocked: 0, minSends: 10, smsSpent: 8, ranSeconds: 30 } }).violations).toEqual([]);
    expect(verdict(cleanTally(), { ...clean, pumping: { asked: 30, blocked: 0, minSends: 10, smsSpent: 14, blockDueAfterSeconds: 12, ranSeconds: 8 } }).violations).toEqual([]);
  });

  it('fails a run with no success after Redis returned, and says never', () => {
    const tally = new Tally();
    tally.redisDownAt = 1_000;
    tally.redisUpAt = 4_000;
    tally.answered(3_000, 3_100, true);
    const result = verdict(tally, clean);
    expect(result.violations).toContain('no success after Redis returned');
    expect(result.last).toMatch(/recovered in never s$/);
  });
});

describe('soak client: how answers are classified', () => {
  let server: Server;
  let url: string;
  let reply: { status: number; body: string };
  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const envelope = (reason: string) => JSON.stringify({ success: false, error: 'x', data: { reason } });

  it('takes the envelope as an answer, whatever its status below 500', async () => {
    reply = { status: 200, body: JSON.stringify({ success: true, error: null, data: { next_step: 14 } }) };
    const tally = new Tally();
    await expect(post(tally, url, 'FeLogin', {})).resolves.toMatchObject({ kind: 'answer', status: 200 });
    expect(tally.requests).toMatchObject({ sent: 1, answered: 1, unexpected: 0 });
  });

  it('counts an answer that is not the envelope as unexpected', async () => {
    reply = { status: 200, body: '<html>oops</html>' };
    const tally = new Tally();
    await expect(post(tally, url, 'FeLogin', {})).resolves.toMatchObject({ kind: 'unexpected' });
    reply = { status: 200, body: JSON.stringify({ success: true, error: 'both', data: null }) };
    await post(tally, url, 'FeLogin', {});
    expect(tally.requests.unexpected).toBe(2);
  });

  it('allows a 503 store_unavailable only during the Redis outage; any other 5xx is unexpected', async () => {
    const tally = new Tally();
    reply = { status: 503, body: envelope('store_unavailable') };
    await expect(post(tally, url, 'FeVerifyOtp', {})).resolves.toMatchObject({ kind: 'unexpected' });
    tally.redisDownAt = Date.now() - 10;
    await expect(post(tally, url, 'FeVerifyOtp', {})).resolves.toEqual({ kind: 'store_unavailable' });
    reply = { status: 500, body: envelope('internal_error') };
    await expect(post(tally, url, 'FeVerifyOtp', {})).resolves.toMatchObject({ kind: 'unexpected' });
    reply = { status: 503, body: envelope('upstream_error') };
    await expect(post(tally, url, 'FeVerifyOtp', {})).resolves.toMatchObject({ kind: 'unexpected' });
    expect(tally.requests).toMatchObject({ outage503: 1, unexpected: 3 });
  });

  it('counts a closed port as a cut connection, not as an answer', async () => {
    const tally = new Tally();
    await expect(post(tally, `http://127.0.0.1:${await freePort()}`, 'FeLogin', {})).resolves.toMatchObject({ kind: 'cut', error: 'ECONNREFUSED' });
    expect(tally.requests).toMatchObject({ connectionErrors: 1, answered: 0, unexpected: 0 });
  });
});

describe('soak upstreams: codes and ingests as the fakes received them', () => {
  let upstreams: SoakUpstreams;
  beforeAll(async () => {
    upstreams = await startUpstreams(loadConfig({ env: { NODE_ENV: 'test' }, overrides: {} }));
  });
  afterAll(() => upstreams.close());

  it('keeps every code per recipient, however the phone is written', async () => {
    const sms = (body: string) =>
      axios.post(upstreams.config.sms.api_url, { receiver: '+393330000001', body, sender: 'Soak' }, { headers: { authorization: `Bearer ${SANDBOX_SMS_KEY}` } });
    await sms('Il tuo codice è 111111');
    await sms('Il tuo codice è 222222');
    expect(upstreams.outbox.codeCount('+39 333 000 0001')).toBe(2);
    await expect(upstreams.outbox.nextCode('+393330000001', 1)).resolves.toBe('222222');
    await expect(upstreams.outbox.nextCode('+393330000001', 2, 50)).resolves.toBeUndefined();
    expect(upstreams.outbox.issued).toBe(2);
  });

  it('counts the collector ingests of each login by uid and token', async () => {
    const { base_url, ingest_login_path } = upstreams.config.user_collector;
    const ingest = (uid: string, accessToken: string) => axios.post(`${base_url}${ingest_login_path}`, { uid, accessToken }, { headers: { 'x-internal-token': SANDBOX_COLLECTOR_TOKEN } });
    await ingest('PNIsoak1', 'token-one-aaaa');
    await ingest('PNIsoak1', 'token-one-aaaa');
    expect(upstreams.outbox.ingestsOf('PNIsoak1', 'token-one-aaaa')).toBe(2);
    expect(upstreams.outbox.ingestsOf('PNIsoak1', 'token-two-bbbb')).toBe(0);
    expect(upstreams.outbox.ingestsOf('PNIsoak2', 'token-one-aaaa')).toBe(0);
  });
});
