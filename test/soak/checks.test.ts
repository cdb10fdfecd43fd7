import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import { loadConfig } from '../../src/core/config/load';
import { SANDBOX_COLLECTOR_TOKEN } from '../../src/sandbox/collector';
import { SANDBOX_SMS_KEY } from '../../src/sandbox/sms';
import { createPow } from '../../src/domain/limits/pow';
import { post } from '../../scripts/soak/client';
import type { Fleet } from '../../scripts/soak/fleet';
import { Journeys } from '../../scripts/soak/journeys';
import { PowSolver } from '../../scripts/soak/solver';
import { Tally, verdict, type ChallengeFigures } from '../../scripts/soak/tally';
import { SoakOutbox, startUpstreams, type SoakUpstreams } from '../../scripts/soak/upstreams';
import { freePort } from '../support/ports';

/*
 * The soak's own checks (scripts/soak): what it counts as unexpected, how it reads codes and
 * ingests from the fakes, and that every broken "must be 0" figure fails the run. The soak
 * itself runs in the test command (`npm run soak -- --smoke`) and exits 1 on a violation.
 */

const LAST_LINE =
  /^soak: \d+ journeys, \d+ double-accepted, \d+ lost ingests, \d+ unexpected 5xx, recovered in (\d+\.\d\d|never) s$/;
const CHALLENGE_SUMMARY =
  /; challenged \d+ journeys \(\d+\.\d\d %\), non-solving bots \d+ SMS before the challenge and \d+ after, solving bot (\d+(\.\d)? ms CPU per SMS|no SMS paid for)$/;
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
    expect(result.last).toBe(
      'soak: 1 journeys, 0 double-accepted, 0 lost ingests, 0 unexpected 5xx, recovered in 0.60 s',
    );
  });

  it.each([
    ['a code accepted twice', (t: Tally) => (t.codes.doubleAccepted = 1), {}, /codes accepted twice: 1/],
    ['a wrong code accepted', (t: Tally) => (t.codes.wrongAccepted = 2), {}, /wrong or replaced codes accepted: 2/],
    ['a lost ingest', () => undefined, { lostIngests: 3 }, /lost ingests: 3/],
    ['an unexpected answer', (t: Tally) => t.unexpected('FeLogin answered 500'), {}, /unexpected answers .*: 1/],
    [
      'a journey failed with no fault',
      (t: Tally) => t.journeyFailed('email_login', 'FeLogin refused invalid', ''),
      {},
      /journeys failed without a fault: 1/,
    ],
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
    const result = verdict(cleanTally(), {
      ...clean,
      pumping: { asked: 60, blocked: 40, minSends: 10, smsSpent: 10, blockedAfterSeconds: 1.5 },
    });
    expect(result.violations).toEqual([]);
    expect(result.lines).toContain(
      'pumping: 60 codes asked to one range, 10 SMS spent on it, 40 refused as blocked, the range blocked 1.5 s into the campaign',
    );
  });

  it.each([
    [
      '25 SMS or more spent on the pumped range',
      { asked: 60, blocked: 10, minSends: 10, smsSpent: 25 },
      /25 SMS spent on the pumped range \(must be under 25\)/,
    ],
    [
      'a range that ran past the time its block was due and was never blocked',
      { asked: 60, blocked: 0, minSends: 10, smsSpent: 12, blockDueAfterSeconds: 20, ranSeconds: 30 },
      /range never blocked \(due after 20 s\)/,
    ],
  ])('fails the run on %s', (_name, pumping, message) => {
    expect(verdict(cleanTally(), { ...clean, pumping }).violations.join('\n')).toMatch(message);
  });

  it('does not ask a campaign cut short by the faults or the graces to have met the block', () => {
    expect(
      verdict(cleanTally(), { ...clean, pumping: { asked: 30, blocked: 0, minSends: 10, smsSpent: 8, ranSeconds: 30 } })
        .violations,
    ).toEqual([]);
    expect(
      verdict(cleanTally(), {
        ...clean,
        pumping: { asked: 30, blocked: 0, minSends: 10, smsSpent: 14, blockDueAfterSeconds: 12, ranSeconds: 8 },
      }).violations,
    ).toEqual([]);
  });

  describe('with the bot challenge adaptive', () => {
    const challenged = (journeys: number, challengedJourneys: number) => {
      const tally = cleanTally();
      for (let i = 1; i < journeys; i += 1) tally.journeyStarted('email_login');
      tally.challenge = { journeysChallenged: challengedJourneys, solved: challengedJourneys };
      return tally;
    };
    const bots = (spoil: Partial<ChallengeFigures['flood']> = {}): ChallengeFigures => ({
      flood: {
        asked: 60,
        challenged: 57,
        smsBefore: 3,
        smsAfter: 0,
        firstChallengeAfterSeconds: 3.2,
        allowedBefore: 3,
        ...spoil,
      },
      solver: { asked: 55, challenged: 52, smsFree: 3, smsPaid: 52, solves: 52, cpuMs: 6760 },
    });
    // The campaign from many addresses: 12 SMS before its range was watched and it was first challenged.
    const campaign = {
      asked: 60,
      blocked: 0,
      minSends: 5,
      smsSpent: 12,
      challenged: 45,
      smsBeforeChallenge: 12,
      firstChallengeAfterSeconds: 14.1,
      blockedAfterSeconds: 22.4,
    };

    it('passes a run whose honest journeys were rarely asked and whose non-solving bots got nothing once asked, and reports the figures', () => {
      const result = verdict(challenged(1000, 9), { ...clean, pumping: campaign, challenge: bots() });
      expect(result.violations).toEqual([]);
      expect(result.lines).toEqual(
        expect.arrayContaining([
          '  challenge: 45 of its requests asked to solve one (it never does), the first 14.1 s into the campaign; 12 SMS before it, 0 after',
          'challenge: 9 of 1000 journeys asked to solve one (0.90 %), 9 solutions given',
          'flood from one client (never solves): 60 codes asked, 57 challenged, the first 3.2 s in; 3 SMS before its first challenge, 0 after',
          'bot that solves: 55 codes asked, 52 challenged, 52 solved; 3 SMS unasked, 52 paid with 6760 ms of CPU: 130 ms CPU per SMS',
        ]),
      );
      expect(result.last).toBe(
        'soak: 1000 journeys, 0 double-accepted, 0 lost ingests, 0 unexpected 5xx, recovered in 0.60 s; challenged 9 journeys (0.90 %), non-solving bots 15 SMS before the challenge and 0 after, solving bot 130 ms CPU per SMS',
      );
      expect(result.last.replace(CHALLENGE_SUMMARY, '')).toMatch(LAST_LINE);
    });

    it('fails the run when 1 % of the journeys or more were asked to solve one', () => {
      expect(verdict(challenged(1000, 10), { ...clean, challenge: bots() }).violations).toEqual([
        'challenge: 10 of 1000 journeys asked to solve one, 1.00 % (must be under 1 %)',
      ]);
      expect(verdict(challenged(1000, 9), { ...clean, challenge: bots() }).violations).toEqual([]);
    });

    it('fails the run when the flood got an SMS after its first challenge, or more before it than its signal allows', () => {
      expect(verdict(challenged(100, 0), { ...clean, challenge: bots({ smsAfter: 1 }) }).violations.join('\n')).toMatch(
        /flood from one client got 1 SMS after its first challenge, never solving one \(must be 0\)/,
      );
      expect(
        verdict(challenged(100, 0), {
          ...clean,
          challenge: bots({ smsBefore: 4, challenged: 0, firstChallengeAfterSeconds: undefined }),
        }).violations.join('\n'),
      ).toMatch(/got 4 SMS before it was challenged \(must be at most 3/);
    });

    it('reports the bot from one /48 and fails the run when it got an SMS after its first challenge, or more before it than its /48 allows', () => {
      const slash48 = {
        asked: 60,
        challenged: 40,
        smsBefore: 20,
        smsAfter: 0,
        firstChallengeAfterSeconds: 20.4,
        allowedBefore: 20,
      };
      const passed = verdict(challenged(100, 0), { ...clean, challenge: { ...bots(), slash48 } });
      expect(passed.violations).toEqual([]);
      expect(passed.lines).toContain(
        'bot from one /48, a new /64 every 3 requests (never solves): 60 codes asked, 40 challenged, the first 20.4 s in; 20 SMS before its first challenge, 0 after',
      );
      expect(passed.last).toMatch(/non-solving bots 23 SMS before the challenge and 0 after/);
      expect(
        verdict(challenged(100, 0), { ...clean, challenge: { ...bots(), slash48: { ...slash48, smsAfter: 2 } } })
          .violations,
      ).toEqual(['challenge: the bot from one /48 got 2 SMS after its first challenge, never solving one (must be 0)']);
      expect(
        verdict(challenged(100, 0), { ...clean, challenge: { ...bots(), slash48: { ...slash48, smsBefore: 21 } } })
          .violations,
      ).toEqual([
        'challenge: the bot from one /48 got 21 SMS before it was challenged (must be at most 20, challenge.network_48.identifiers)',
      ]);
    });

    it('fails the run when the pumping campaign got an SMS after its first challenge', () => {
      const result = verdict(challenged(100, 0), {
        ...clean,
        pumping: { ...campaign, smsSpent: 13 },
        challenge: bots(),
      });
      expect(result.violations).toEqual([
        'challenge: the pumping campaign got 1 SMS after its first challenge, never solving one (must be 0)',
      ]);
      expect(result.last).toMatch(/non-solving bots 15 SMS before the challenge and 1 after/);
    });

    it('reads the block from the ledger: a campaign challenged, never refused as blocked, passes once its range was seen blocked', () => {
      expect(
        verdict(challenged(100, 0), {
          ...clean,
          pumping: { ...campaign, blockDueAfterSeconds: 20, ranSeconds: 60 },
          challenge: bots(),
        }).violations,
      ).toEqual([]);
      const unblocked = { ...campaign, blockDueAfterSeconds: 20, ranSeconds: 60, blockedAfterSeconds: undefined };
      expect(
        verdict(challenged(100, 0), { ...clean, pumping: unblocked, challenge: bots() }).violations.join('\n'),
      ).toMatch(/range never blocked/);
    });

    it('says when a solving bot got no SMS for its solutions', () => {
      const result = verdict(challenged(100, 0), {
        ...clean,
        challenge: { ...bots(), solver: { asked: 3, challenged: 0, smsFree: 3, smsPaid: 0, solves: 0, cpuMs: 0 } },
      });
      expect(result.last).toMatch(/solving bot no SMS paid for$/);
      expect(result.last).toMatch(CHALLENGE_SUMMARY);
    });
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
  let heard: IncomingHttpHeaders = {};
  beforeAll(async () => {
    server = createServer(
      (req, res) => (
        (heard = req.headers),
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body)
      ),
    );
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

  it('forwards the client address it is given, as the balancer of the fleet, and none otherwise', async () => {
    reply = { status: 200, body: JSON.stringify({ success: true, error: null, data: { next_step: 14 } }) };
    await post(new Tally(), url, 'FeLogin', {}, '10.0.0.7');
    expect(heard['x-forwarded-for']).toBe('10.0.0.7');
    await post(new Tally(), url, 'FeLogin', {});
    expect(heard['x-forwarded-for']).toBeUndefined();
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
    await expect(post(tally, `http://127.0.0.1:${await freePort()}`, 'FeLogin', {})).resolves.toMatchObject({
      kind: 'cut',
      error: 'ECONNREFUSED',
    });
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
      axios.post(
        upstreams.config.sms.api_url,
        { receiver: '+393330000001', body, sender: 'Soak' },
        { headers: { authorization: `Bearer ${SANDBOX_SMS_KEY}` } },
      );
    await sms('Il tuo codice è 111111');
    await sms('Il tuo codice è 222222');
    expect(upstreams.outbox.codeCount('+39 333 000 0001')).toBe(2);
    await expect(upstreams.outbox.nextCode('+393330000001', 1)).resolves.toBe('222222');
    await expect(upstreams.outbox.nextCode('+393330000001', 2, 50)).resolves.toBeUndefined();
    expect(upstreams.outbox.issued).toBe(2);
  });

  it('counts the collector ingests of each login by uid and token', async () => {
    const { base_url, ingest_login_path } = upstreams.config.user_collector;
    const ingest = (uid: string, accessToken: string) =>
      axios.post(
        `${base_url}${ingest_login_path}`,
        { uid, accessToken },
        { headers: { 'x-internal-token': SANDBOX_COLLECTOR_TOKEN } },
      );
    await ingest('PNIsoak1', 'token-one-aaaa');
    await ingest('PNIsoak1', 'token-one-aaaa');
    expect(upstreams.outbox.ingestsOf('PNIsoak1', 'token-one-aaaa')).toBe(2);
    expect(upstreams.outbox.ingestsOf('PNIsoak1', 'token-two-bbbb')).toBe(0);
    expect(upstreams.outbox.ingestsOf('PNIsoak2', 'token-one-aaaa')).toBe(0);
  });
});

describe('soak solver: the proof of work a challenged journey or bot solves', () => {
  const solver = new PowSolver();
  afterAll(() => solver.close());

  it('solves what the service issues, one at a time in its own process, and counts the CPU it cost', async () => {
    const settings = loadConfig({
      env: { NODE_ENV: 'test' },
      overrides: { challenge: { pow_difficulty: 20_000 } },
    }).challenge;
    const pow = createPow(settings, createHmac('sha256', 'k').update('challenge').digest(), Date.now);
    const challenges = await Promise.all([pow.issue('otp_generate', 'id-1'), pow.issue('otp_generate', 'id-2')]);
    const [first, second] = await Promise.all(challenges.map((c) => solver.solve(c)));
    await expect(pow.verify(first!, 'otp_generate', 'id-1')).resolves.toMatchObject({ id: expect.any(String) });
    await expect(pow.verify(second!, 'otp_generate', 'id-2')).resolves.toMatchObject({ id: expect.any(String) });
    // Bound to what it was issued for, as the service checks.
    await expect(pow.verify(first!, 'otp_generate', 'id-2')).resolves.toEqual({ fault: 'mismatch' });
    expect(solver.solves).toBe(2);
    expect(solver.cpuMs).toBeGreaterThan(0);
  }, 30_000);
});

describe('soak journeys: a step asked to solve the bot challenge', () => {
  let server: Server;
  const solver = new PowSolver();
  const outbox = new SoakOutbox();
  const addresses = new Set<string>();
  const settings = loadConfig({
    env: { NODE_ENV: 'test' },
    overrides: { challenge: { pow_difficulty: 5_000 } },
  }).challenge;
  const pow = createPow(settings, createHmac('sha256', 'k').update('challenge').digest(), Date.now);
  const spentCodes = new Set<string>();
  const answer = (data: Record<string, unknown>) => ({ success: true, error: null, data });

  // A fake instance of the phone-first registration: FeLogin asks for a solved challenge before it sends the code.
  async function act(action: string, body: Record<string, unknown>): Promise<unknown> {
    const send = (to: string) => (
      outbox.add({ channel: to.includes('@') ? 'email' : 'sms', to, body: 'Codice 123456', code: '123456' }),
      undefined
    );
    if (action === 'FeLogin') {
      if (typeof body.challenge !== 'string')
        return {
          success: false,
          error: 'bot check',
          data: { reason: 'challenge_required', challenge: await pow.issue('FeLogin', String(body.identifier)) },
        };
      if ((await pow.verify(body.challenge, 'FeLogin', String(body.identifier))).fault)
        return { success: false, error: 'bad solution', data: { reason: 'challenge_required' } };
      send(String(body.identifier));
      return answer({ next_step: 14 });
    }
    if (action === 'FeVerifyOtp') {
      const to = String(body.email ?? body.phone);
      if (spentCodes.has(to)) return { success: false, error: 'spent', data: { reason: 'invalid' } };
      spentCodes.add(to);
      return answer(
        body.pending_proof
          ? { next_step: 25, flow: 'f', register_proof: 'r' }
          : { next_step: 24, flow: 'f', phone_proof: 'p' },
      );
    }
    if (body.phase === 'email_otp') {
      send(String(body.email));
      return answer({ next_step: 23, flow: 'f', pending_proof: 'q' });
    }
    return answer({ next_step: 90, uid: 'PNIsoak9' });
  }

  beforeAll(async () => {
    server = createServer((req, res) => {
      addresses.add(String(req.headers['x-forwarded-for']));
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const action = new URL(req.url!, 'http://x').searchParams.get('action')!;
        void act(action, JSON.parse(Buffer.concat(chunks).toString())).then((body) =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    solver.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('solves it as the page would, repeats the step with the solution, and counts the journey as challenged once', async () => {
    const instance = { name: 'fake', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    const fleet = { next: () => instance, other: () => instance } as unknown as Fleet;
    const tally = new Tally();
    await new Journeys(tally, fleet, outbox, solver).runNext();
    expect(tally.failureExamples).toEqual([]);
    expect(tally.journeys).toMatchObject({ started: 1, completed: 1, failed: 0 });
    expect(tally.challenge).toEqual({ journeysChallenged: 1, solved: 1 });
    expect(solver.solves).toBe(1);
    // Every request of the journey came from its one address (the first journey's: each on a /24 of its own).
    expect([...addresses]).toEqual(['10.1.0.0']);
  }, 30_000);
});
