import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { arrivalSchedule } from '../../bench/pacer';
import { runLoad } from '../../bench/load';

/*
 * The tail runs' open-loop load (bench/pacer.ts): the schedule itself, and a short real paced
 * run of the login pair against a stand-in that answers as the service does (FeLogin with its
 * code, FeVerifyOtp checking it), slow enough to measure, fast enough to keep up.
 */

describe('bench paced load: the arrival schedule', () => {
  it('starts one journey every 1 / rate s, evenly, a pair of requests half as often', () => {
    expect(arrivalSchedule(4, 1)).toEqual([0, 250, 500, 750]);
    expect(arrivalSchedule(400, 2, 2)).toHaveLength(400);
    const gaps = arrivalSchedule(600, 1, 2)
      .map((at, i, all) => (i === 0 ? 0 : at - all[i - 1]!))
      .slice(1);
    // No burst: every gap is the same 1/300 s, unlike autocannon's overallRate (a second's share back to back).
    expect(Math.min(...gaps)).toBeCloseTo(1000 / 300, 9);
    expect(Math.max(...gaps)).toBeCloseTo(1000 / 300, 9);
    expect(arrivalSchedule(0.5, 1)).toEqual([]);
  });
});

describe('bench paced load: a short real run of the login pair', () => {
  const SERVICE_MS = 4;
  let server: Server;
  let url: string;
  const seen: { action: string; at: number; body: Record<string, string> }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const action = new URL(req.url!, 'http://x').searchParams.get('action')!;
        const body = JSON.parse(raw) as Record<string, string>;
        seen.push({ action, at: performance.now(), body });
        const digits = (body.identifier ?? body.phone ?? '').slice(-6);
        const answer =
          action === 'FeLogin'
            ? { success: true, otp: digits }
            : action === 'FeVerifyOtp'
              ? { success: body.otp_code === digits }
              : { success: true };
        setTimeout(
          () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
          SERVICE_MS,
        );
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('answers at the offered rate, chains each FeVerifyOtp to its FeLogin code, and counts latency from the due time', async () => {
    const result = await runLoad({
      kind: 'login',
      url,
      duration: 2,
      connections: 1,
      rate: 100,
      phonePrefix: '+3939',
      firstIndex: 7,
    });
    expect(result).toMatchObject({
      kind: 'login',
      failures: 0,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      mismatches: 0,
      nextIndex: 107,
    });
    expect(result.requests).toBe(200);
    // Answered within 10 % of offered: the schedule's 2 s plus the last pair's answers, and a busy machine's stall.
    expect(result.rps).toBeGreaterThan(90);
    expect(result.rps).toBeLessThanOrEqual(100);
    // Each answer takes the stand-in's 4 ms plus what a busy machine adds (another test file shares the cores; 63 ms
    // seen at p99): plausible, not a second's burst draining through one connection (a median near 200 ms).
    expect(result.p50).toBeGreaterThanOrEqual(SERVICE_MS);
    expect(result.p50).toBeLessThan(SERVICE_MS + 40);
    expect(result.p99).toBeLessThan(SERVICE_MS + 250);
    expect(seen.filter((s) => s.action === 'FeLogin')).toHaveLength(100);
    expect(
      seen.filter((s) => s.action === 'FeVerifyOtp').every((s) => s.body.otp_code === s.body.phone!.slice(-6)),
    ).toBe(true);
    // Evenly started: FeLogin arrivals 20 ms apart as a rule, spread over the whole run, never a second's share at
    // once (a burst generator's median gap is near 0). A stall on a busy machine may release a few overdue journeys
    // together (4 within 10 ms was once seen on CI): that is open-loop catch-up, so only the median gap is held.
    const logins = seen.filter((s) => s.action === 'FeLogin').map((s) => s.at);
    const gaps = logins
      .slice(1)
      .map((at, i) => at - logins[i]!)
      .sort((a, b) => a - b);
    const medianGap = gaps[Math.floor(gaps.length / 2)]!;
    expect(medianGap).toBeGreaterThan(15);
    expect(medianGap).toBeLessThan(25);
    expect(logins.at(-1)! - logins[0]!).toBeGreaterThan(1900);
  }, 20_000);

  it('counts the wait behind a stall: latency from when each request was due, not from when it went out', async () => {
    // The stand-in (in this process, like the generator) blocks 200 ms on its first request: the
    // 20 requests due meanwhile go out late, and each is timed from its slot, so the stall shows
    // in the p99 instead of being omitted (a closed loop would record one slow answer).
    const stall = 200;
    let stalled = false;
    const block = () => {
      if (stalled) return;
      stalled = true;
      const until = performance.now() + stall;
      while (performance.now() < until);
    };
    server.prependListener('request', block);
    const result = await runLoad({ kind: 'echo', url, duration: 1, connections: 1, rate: 100, phonePrefix: '+3939' });
    server.removeListener('request', block);
    expect([result.failures, result.requests]).toEqual([0, 100]);
    expect(result.p99).toBeGreaterThanOrEqual(stall * 0.75);
    expect(result.p50).toBeLessThan(stall / 4);
  }, 20_000);
});
