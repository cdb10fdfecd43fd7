import request from 'supertest';
import { loadConfiguration } from '../../src/core/config/load';
import { weakenedDefences } from '../../src/core/config/weakened';
import { testConfig } from '../support/app';
import { appWithRecordingSms } from '../support/fake-sms';
import { ledgerReport, smsPage } from '../../src/http/sms-routes';
import { solvePow } from '../support/challenge';

/*
 * The bot challenge (docs/security.md, "Bot challenge") driven over HTTP: floods from one client
 * and from many are challenged once their signals cross and get no SMS without a valid, unspent,
 * bound solution; a solution buys one send; honest journeys are never asked; with the challenge
 * off or the limits off nothing changes.
 */

type Tree = Record<string, unknown>;

function appWith(overrides: Tree = {}) {
  const clock = { now: Date.UTC(2030, 0, 7, 9, 0, 0) };
  const now = () => clock.now;
  // A cheap proof of work: the tests solve it in Node, in milliseconds.
  const config = testConfig({
    otp: { debug: true },
    server: { trust_proxy_hops: 1 },
    challenge: { mode: 'adaptive', pow_difficulty: 2000 },
    sms: { allowed_regions: ['IT', 'GB'] },
    ...overrides,
  });
  const { app, deps, metrics, sent } = appWithRecordingSms(config, { now });
  const post = (action: string, body: Tree, ip = '203.0.113.7') =>
    request(app).post(`/${action}`).set('X-Forwarded-For', ip).send(body);
  return { clock, sent, post, metrics, deps };
}

const phone = (n: number) => `+39333${String(n).padStart(7, '0')}`;

describe('the bot challenge in adaptive mode', () => {
  it('challenges a flood from one client once it asks for more identifiers than a person uses, and sends no SMS without a solution', async () => {
    const { post, sent } = appWith();
    const answers = [];
    for (let i = 0; i < 20; i += 1) answers.push((await post('otp_generate', { uid: phone(i) })).body);
    const challenged = answers.findIndex((a) => !a.success);
    // Three identifiers are a person's (challenge.client_identifiers); the fourth is asked to prove work.
    expect(challenged).toBe(3);
    expect(answers.slice(3).every((a) => a.data.reason === 'challenge_required')).toBe(true);
    expect(answers[3].error).toBe('Verifica anti-bot richiesta: completa la verifica e riprova.');
    expect(answers[3].data.challenge).toEqual({
      provider: 'pow',
      parameters: expect.objectContaining({ algorithm: 'SHA-256' }),
      signature: expect.any(String),
    });
    expect(sent).toHaveLength(3);
  });

  it('challenges one client repeating one identifier once its sends cross, and a solved challenge buys exactly one send', async () => {
    const { post, sent, clock } = appWith();
    let last;
    // Two minutes apart: within the per-recipient limits (5 in 10 minutes), over the client's sends (5 in the hour).
    for (let i = 0; i < 6; i += 1) {
      last = (await post('otp_generate', { uid: phone(1) })).body;
      clock.now += 121_000;
    }
    expect(last.data.reason).toBe('challenge_required');
    expect(sent).toHaveLength(5);
    const solution = await solvePow(last.data.challenge);
    const paid = (await post('otp_generate', { uid: phone(1), challenge: solution })).body;
    expect(paid.success).toBe(true);
    expect(sent).toHaveLength(6);
    clock.now += 121_000;
    // The same solution again: spent.
    const replay = (await post('otp_generate', { uid: phone(1), challenge: solution })).body;
    expect(replay.data).toEqual({ reason: 'challenge_required', challenge: expect.any(Object), solution: 'spent' });
    expect(sent).toHaveLength(6);
  });

  it("counts each decision in the SMS ledger's report, beside the SMS it saved", async () => {
    const { post, clock, deps } = appWith();
    let last;
    for (let i = 0; i < 6; i += 1) {
      last = (await post('otp_generate', { uid: phone(1) })).body;
      clock.now += 121_000;
    }
    const solution = await solvePow(last.data.challenge);
    await post('otp_generate', { uid: phone(1), challenge: solution });
    clock.now += 121_000;
    await post('otp_generate', { uid: phone(1), challenge: solution });
    // Recorded after the answer, never in its way.
    await new Promise((resolve) => setImmediate(resolve));
    const report = await ledgerReport(deps, 3600);
    // Asked once without a solution, solved once, the replay refused once.
    expect(report.challenges).toEqual({ challenged: 1, solved: 1, failed: 1 });
    expect(smsPage(report, 3600, 'it')).toContain(
      '<h2>Verifica anti-bot</h2>\n<p>Per ore intere: chiesta 1, superata 1, fallita 1.</p>',
    );
  });

  it('refuses a solution issued for another identifier or another action', async () => {
    const { post, sent } = appWith({ challenge: { mode: 'always', pow_difficulty: 2000 } });
    const asked = (await post('otp_generate', { uid: phone(1) })).body;
    expect(asked.data.reason).toBe('challenge_required');
    const solution = await solvePow(asked.data.challenge);
    const otherNumber = (await post('otp_generate', { uid: phone(2), challenge: solution })).body;
    expect(otherNumber.data.solution).toBe('mismatch');
    const otherAction = (await post('FeLogin', { identifier: phone(1), challenge: solution })).body;
    expect(otherAction.data).toEqual(expect.objectContaining({ reason: 'challenge_required', solution: 'mismatch' }));
    expect(sent).toHaveLength(0);
    // Still good for what it was issued for.
    expect((await post('otp_generate', { uid: phone(1), challenge: solution })).body.success).toBe(true);
    expect(sent).toEqual([phone(1)]);
  });

  it('refuses a tampered, malformed or expired solution', async () => {
    const { post, clock } = appWith({ challenge: { mode: 'always', pow_difficulty: 2000, ttl_seconds: 60 } });
    const asked = (await post('otp_generate', { uid: phone(1) })).body;
    const solution = await solvePow(asked.data.challenge);
    const payload = JSON.parse(Buffer.from(solution, 'base64').toString());
    const key: string = payload.solution.derivedKey;
    payload.solution.derivedKey = `${key[0] === '0' ? '1' : '0'}${key.slice(1)}`;
    const tampered = Buffer.from(JSON.stringify(payload)).toString('base64');
    expect((await post('otp_generate', { uid: phone(1), challenge: tampered })).body.data.solution).toBe('invalid');
    expect((await post('otp_generate', { uid: phone(1), challenge: 'not a payload' })).body.data.solution).toBe(
      'malformed',
    );
    clock.now += 61_000;
    expect((await post('otp_generate', { uid: phone(1), challenge: solution })).body.data.solution).toBe('expired');
  });

  it('challenges a distributed flood (many clients, many numbers of one range) once the pumping defence watches the range, with no SMS after that', async () => {
    const { post, sent, clock } = appWith({
      sms: {
        allowed_regions: ['IT', 'GB'],
        pumping: { block_min_sends: 5, block_min_conversion: 0.5, judge_after_seconds: 30 },
      },
    });
    const bots = { sentAfterWatch: 0, challenged: 0, firstChallengeAt: -1 };
    for (let i = 0; i < 60; i += 1) {
      const before = sent.length;
      const answer = (
        await post('otp_generate', { uid: `+4475206${String(i).padStart(5, '0')}` }, `10.0.${i >> 8}.${i & 255}`)
      ).body;
      if (!answer.success && answer.data.reason === 'challenge_required') {
        bots.challenged += 1;
        if (bots.firstChallengeAt < 0) bots.firstChallengeAt = i;
      }
      if (bots.firstChallengeAt >= 0) bots.sentAfterWatch += sent.length - before;
      clock.now += 10_000;
    }
    expect(bots.firstChallengeAt).toBeGreaterThan(0);
    expect(bots.sentAfterWatch).toBe(0);
    expect(bots.challenged).toBe(60 - bots.firstChallengeAt);
    // An Italian number at the same time, from another client: not asked.
    expect((await post('otp_generate', { uid: phone(5) }, '198.51.100.1')).body.success).toBe(true);
  });

  it('never challenges honest single journeys: one code, verified, from each of many clients', async () => {
    const { post, metrics, clock } = appWith();
    for (let i = 0; i < 50; i += 1) {
      // People arrive over minutes, not all in one (fifty new numbers in one minute is a spike: country_velocity).
      clock.now += 3_000;
      const ip = `192.0.2.${i}`;
      // Numbers across Italian ranges, as people's are.
      const number = `+393${30 + (i % 20)}${String(1_000_000 + i * 7919).slice(-7)}`;
      const sent = (await post('otp_generate', { uid: number }, ip)).body;
      expect(sent.success).toBe(true);
      expect((await post('verify_otp', { email: number, otp_code: sent.data.otp }, ip)).body.data.valid).toBe(true);
    }
    expect(await metrics.render()).not.toMatch(/lfa_challenge_decisions_total\{/);
  });

  it('challenges codes to a range past half its hourly cap, whoever asks (range_rate)', async () => {
    const { post, sent, metrics } = appWith({
      sms: { allowed_regions: ['IT', 'GB'], pumping: { prefix_sends_per_hour: 10 } },
    });
    const answers = [];
    for (let i = 0; i < 8; i += 1)
      answers.push((await post('otp_generate', { uid: phone(200 + i) }, `198.51.100.${i}`)).body);
    expect(answers.map((a) => a.success)).toEqual([true, true, true, true, true, false, false, false]);
    expect(sent).toHaveLength(5);
    expect(await metrics.render()).toContain(
      'lfa_challenge_decisions_total{decision="challenged",signal="range_rate"} 3',
    );
  });

  it('challenges a client after its wrong codes, and after a limit refused it', async () => {
    const { post } = appWith();
    const sent = (await post('otp_generate', { uid: phone(1) })).body;
    expect(sent.success).toBe(true);
    for (let i = 0; i < 5; i += 1) await post('verify_otp', { email: phone(1), otp_code: '000000' });
    expect((await post('otp_generate', { uid: phone(2) })).body.data.reason).toBe('challenge_required');

    const other = appWith({ rate_limits: { verifies_per_ip_per_minute: 1 } });
    await other.post('verify_otp', { email: phone(1), otp_code: '000000' }, '198.51.100.9');
    expect((await other.post('verify_otp', { email: phone(1), otp_code: '000000' }, '198.51.100.9')).status).toBe(429);
    expect((await other.post('otp_generate', { uid: phone(2) }, '198.51.100.9')).body.data.reason).toBe(
      'challenge_required',
    );
    expect((await other.post('otp_generate', { uid: phone(2) }, '198.51.100.10')).body.success).toBe(true);
  });

  it('counts each decision in Prometheus by the signal that asked', async () => {
    const { post, metrics } = appWith({ challenge: { mode: 'always', pow_difficulty: 2000 } });
    const asked = (await post('otp_generate', { uid: phone(1) })).body;
    await post('otp_generate', { uid: phone(1), challenge: 'x' });
    await post('otp_generate', { uid: phone(1), challenge: await solvePow(asked.data.challenge) });
    const text = await metrics.render();
    expect(text).toContain('lfa_challenge_decisions_total{decision="challenged",signal="always"} 1');
    expect(text).toContain('lfa_challenge_decisions_total{decision="failed",signal="always"} 1');
    expect(text).toContain('lfa_challenge_decisions_total{decision="solved",signal="always"} 1');
  });
});

describe('the bot challenge leaves the contract alone', () => {
  it('asks nothing with challenge.mode off: twenty codes from one client go out', async () => {
    const { post, sent } = appWith({ challenge: { mode: 'off' } });
    for (let i = 0; i < 20; i += 1) expect((await post('otp_generate', { uid: phone(i) })).body.success).toBe(true);
    expect(sent).toHaveLength(20);
  });

  it('asks nothing with rate_limits.enabled false, even in mode always', async () => {
    const { post, sent } = appWith({ challenge: { mode: 'always' }, rate_limits: { enabled: false } });
    for (let i = 0; i < 5; i += 1) expect((await post('otp_generate', { uid: phone(i) })).body.success).toBe(true);
    expect(sent).toHaveLength(5);
  });
});

describe('the bot challenge in production', () => {
  const production = (overrides: Tree) =>
    loadConfiguration({
      env: { NODE_ENV: 'production' },
      overrides: { security: { secret: 'x'.repeat(32) }, log: { level: 'silent' }, ...overrides },
    });

  it('is adaptive unless configured', () => {
    expect(production({}).config.challenge.mode).toBe('adaptive');
    expect(production({ challenge: { mode: 'always' } }).config.challenge.mode).toBe('always');
  });

  it('refuses mode off without its acknowledgement, and lists it among the weakened defences', () => {
    expect(() => production({ challenge: { mode: 'off' } })).toThrow(
      /challenge\.mode: off .* unless challenge\.off_in_production is true/,
    );
    const acknowledged = production({ challenge: { mode: 'off', off_in_production: true } }).config;
    expect(weakenedDefences(acknowledged).map((w) => w.key)).toContain('challenge.mode');
  });

  it('is off outside production unless configured', () => {
    expect(testConfig().challenge.mode).toBeUndefined();
    expect(weakenedDefences(testConfig()).map((w) => w.key)).not.toContain('challenge.mode');
  });
});
