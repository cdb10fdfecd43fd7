import { BENCH_USAGE, parseOptions, UsageError } from '../../bench/options';
import { requestsFor, type LoadResult } from '../../bench/load';
import { hotFunctions } from '../../bench/profile';
import {
  caseFigures,
  formatTable,
  formatTail,
  jsonReport,
  median,
  spreadOf,
  tailFigures,
  verdict,
  type CaseOutcome,
  type Run,
  type TailRun,
} from '../../bench/report';
import { BASELINE, CASES, PAIRING, TAIL_CASE, TAIL_LOADS } from '../../bench/cases';
import { runBench, setupRefusal } from '../../bench/run';
import { benchConfig } from '../../bench/service';
import { BENCH_PASSKEY, benchPasskeyPublicKey } from '../../bench/passkey';
import { verifyAuthenticationResponse } from '@simplewebauthn/server';
import { createChallengeGate } from '../../src/domain/limits/challenge';
import { createMemoryRateLimiter } from '../../src/domain/limits/rate-limiter';
import { createLogger } from '../../src/core/logger';

/*
 * The benchmark is not part of `npm test`, but its parts are, so it cannot rot: a short run of
 * the real processes (service, fake upstreams, load generator, memory probe) on the cases the
 * service must answer without a failure, and the pure parts (options, request builders,
 * verdict, profile summary) on their own.
 */

const result = (overrides: Partial<LoadResult> = {}): LoadResult => ({
  kind: 'otp_generate',
  requests: 100,
  failures: 0,
  rps: 100,
  p50: 1,
  p99: 2,
  durationSeconds: 1,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  mismatches: 0,
  nextIndex: 100,
  ...overrides,
});
const otpGenerate = CASES.find((c) => c.name === 'otp_generate')!;
const cpu = (appMicrosPerRequest: number) => ({ appMicrosPerRequest, appCores: 1, loadCores: 1, otherCores: 0 });
const run = (micros: number, overrides: Partial<LoadResult> = {}): Run => ({
  result: result(overrides),
  cpu: cpu(micros),
});

describe('bench options', () => {
  it('runs each case for a second with no warm-up in smoke mode', () => {
    expect(parseOptions(['--smoke'])).toMatchObject({
      smoke: true,
      duration: 1,
      warmup: 0,
      connections: 50,
      records: 100_000,
    });
  });

  it('defaults to three paired rounds of four seconds, 50 connections and one million records', () => {
    expect(parseOptions([])).toMatchObject({
      smoke: false,
      rounds: 3,
      strict: false,
      duration: 4,
      warmup: 1,
      connections: 50,
      records: 1_000_000,
      cases: null,
      redis: true,
      pin: true,
      jsonFile: null,
    });
  });

  it('takes --strict, --rounds and --skip-redis', () => {
    expect(parseOptions(['--strict', '--rounds', '5', '--skip-redis'])).toMatchObject({
      strict: true,
      rounds: 5,
      redis: false,
    });
  });

  it('takes a file for the JSON figures', () => {
    expect(parseOptions(['--json', 'out.json']).jsonFile).toBe('out.json');
    expect(() => parseOptions(['--json'])).toThrow(UsageError);
  });

  it('takes duration, connections and cases in both spellings', () => {
    expect(parseOptions(['--duration', '3', '--connections=20', '--cases', 'verify_otp,login'])).toMatchObject({
      duration: 3,
      connections: 20,
      cases: ['verify_otp', 'login'],
    });
  });

  it('refuses an unknown option, a value that is not a number, or a case that does not exist', () => {
    expect(() => parseOptions(['--fast'])).toThrow(UsageError);
    expect(() => parseOptions(['--duration', 'ten'])).toThrow(UsageError);
    expect(() => parseOptions(['--cases', 'verify_otp,verify'])).toThrow(/unknown: verify/);
    expect(() => parseOptions(['--fast'])).toThrow('unknown option --fast; npm run bench -- --help lists the options');
  });

  it('takes --help and -h, and its usage names exactly the options it takes', () => {
    expect(parseOptions(['--help']).help).toBe(true);
    expect(parseOptions(['-h']).help).toBe(true);
    expect(parseOptions([]).help).toBe(false);
    const listed = [...BENCH_USAGE.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!);
    expect(listed).toEqual([
      '--smoke',
      '--rounds',
      '--duration',
      '--warmup',
      '--connections',
      '--records',
      '--cases',
      '--skip-redis',
      '--strict',
      '--against',
      '--no-pin',
      '--json',
      '--profile',
      '--help',
    ]);
    // Each listed option is taken, with a value where it needs one.
    const values: Record<string, string> = {
      '--rounds': '2',
      '--duration': '1',
      '--warmup': '1',
      '--connections': '5',
      '--records': '10',
      '--cases': 'login',
      '--against': 'main',
      '--json': 'x.json',
      '--profile': 'p',
    };
    for (const option of listed)
      expect(() => parseOptions(option in values ? [option, values[option]!] : [option])).not.toThrow();
  });
});

describe('bench load requests', () => {
  const body = (
    request: { setupRequest?: (r: object, c: Record<string, string>) => { body?: string } },
    context: Record<string, string> = {},
  ) => request.setupRequest!({}, context).body;

  it('sends every otp_generate request to a new phone of the case range', () => {
    const { requests } = requestsFor({
      kind: 'otp_generate',
      url: 'http://x',
      duration: 1,
      connections: 1,
      phonePrefix: '+3931',
      firstIndex: 7,
    });
    expect([body(requests[0]!), body(requests[0]!)]).toEqual(['{"uid":"+393100000007"}', '{"uid":"+393100000008"}']);
  });

  it('verifies each pre-issued key once and says when the keys ran out', () => {
    const { requests, state } = requestsFor({
      kind: 'verify_otp',
      url: 'http://x',
      duration: 1,
      connections: 1,
      phonePrefix: '+3932',
      code: '482916',
      keys: 1,
    });
    expect(body(requests[0]!)).toBe('{"email":"+393200000000","otp_code":"482916"}');
    expect(state.exhausted).toBe(false);
    body(requests[0]!);
    expect(state.exhausted).toBe(true);
  });

  it('carries the code FeLogin answered into the FeVerifyOtp of the same connection', () => {
    const { requests } = requestsFor({
      kind: 'login',
      url: 'http://x',
      duration: 1,
      connections: 1,
      phonePrefix: '+3933',
    });
    const context: Record<string, string> = {};
    expect(body(requests[0]!, context)).toBe('{"identifier":"+393300000000"}');
    requests[0]!.onResponse!(
      200,
      '{"success":true,"error":null,"data":{"next_step":14,"otp":{"otp":"123456"}}}',
      context,
      {},
    );
    expect(body(requests[1]!, context)).toBe('{"flow":"phone","phone":"+393300000000","otp_code":"123456"}');
  });
});

describe('the passkey_login load', () => {
  it('answers the challenge PasskeyLoginOptions gave with an assertion of the bench passkey that verifies', async () => {
    const { requests } = requestsFor({ kind: 'passkey_login', url: 'http://x', duration: 1, connections: 1 });
    const context: Record<string, string> = {};
    expect(requests[0]!.body).toBe('{}');
    const challenge = Buffer.from('a challenge of thirty-two bytes!!').toString('base64url');
    requests[0]!.onResponse!(
      200,
      `{"success":true,"error":null,"data":{"options":{"challenge":"${challenge}","rpId":"localhost"},"passkey_proof":"eyJh.sig-_1"}}`,
      context,
      {},
    );
    const sent = JSON.parse(requests[1]!.setupRequest!({}, context).body as string);
    expect(sent.passkey_proof).toBe('eyJh.sig-_1');
    const verified = await verifyAuthenticationResponse({
      response: sent.credential,
      expectedChallenge: challenge,
      expectedOrigin: BENCH_PASSKEY.origin,
      expectedRPID: BENCH_PASSKEY.rpId,
      credential: { id: BENCH_PASSKEY.id, publicKey: benchPasskeyPublicKey() as Uint8Array<ArrayBuffer>, counter: 0 },
      requireUserVerification: true,
    });
    // A synced passkey: its counter stays 0, so every connection may use it at once.
    expect(verified).toMatchObject({ verified: true, authenticationInfo: { newCounter: 0, credentialBackedUp: true } });
  });

  it('runs on a service with passkeys on, on the embedded database in memory', () => {
    const passkeyLogin = CASES.find((c) => c.name === 'passkey_login')!;
    expect(passkeyLogin).toMatchObject({ requires: ['PasskeyLoginOptions', 'PasskeyLogin'], upstreamCalls: 1 });
    const config = benchConfig({ upstreams: 'http://x', store: 'memory', logLevel: 'warn', passkeys: true });
    expect(config.passkeys).toMatchObject({ enabled: true, rp_id: 'localhost', origins: [BENCH_PASSKEY.origin] });
    expect(config.database).toMatchObject({ url: '', embedded_dir: '' });
    expect(benchConfig({ upstreams: 'http://x', store: 'memory', logLevel: 'warn' }).passkeys.enabled).toBe(false);
  });
});

describe('bench verdict', () => {
  it('passes when every case that ran answered without a failure, skipped ones included', () => {
    const outcomes: CaseOutcome[] = [
      { benchCase: BASELINE, runs: [run(40)] },
      { benchCase: otpGenerate, skipped: 'redis-server not installed' },
    ];
    expect(verdict(outcomes)).toEqual({ ok: true, problems: [] });
  });

  it('fails a case with a failed answer in any round, naming what failed', () => {
    const { ok, problems } = verdict([
      {
        benchCase: otpGenerate,
        runs: [run(300), run(300, { failures: 2, mismatches: 2, firstFailure: '{"success":false}' })],
        paired: [run(100), run(100)],
      },
    ]);
    expect(ok).toBe(false);
    expect(problems[0]).toContain('success:false 2');
  });

  it('fails a reference run that answered nothing', () => {
    expect(
      verdict([{ benchCase: otpGenerate, runs: [run(300)], paired: [run(100, { requests: 0, rps: 0 })] }]).ok,
    ).toBe(false);
  });
});

describe('bench ratios, paired', () => {
  const otpGenerateInfo = CASES.find((c) => c.name === 'otp_generate+info')!;
  const verifyOtp = CASES.find((c) => c.name === 'verify_otp')!;
  // Three rounds; each round's reference moves with the machine, and the case with it.
  const outcomes = (caseMicros: number[], infoMicros: number[]): CaseOutcome[] => [
    { benchCase: BASELINE, runs: [run(40)] },
    { benchCase: otpGenerate, runs: caseMicros.map((m) => run(m)), paired: [run(100), run(150), run(120)] },
    { benchCase: otpGenerateInfo, runs: infoMicros.map((m) => run(m)), paired: [run(100), run(150), run(120)] },
    { benchCase: verifyOtp, runs: [run(80), run(90), run(70)], paired: [run(40), run(45), run(35)] },
  ];

  it("takes the median and the spread of the rounds' ratios", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1, 2, 3, 4])).toBe(2.5);
    expect(spreadOf([1.8, 2, 2.2])).toBeCloseTo(0.2);
  });

  it('judges each case by its CPU per answer over the reference run right before it, median of the rounds, against its floor', () => {
    const figures = caseFigures(outcomes([190, 300, 240], [200, 300, 250]));
    expect(figures.map((c) => [c.name, c.ratio, c.ratio_to, c.spread, c.floor, c.result, c.noisy])).toEqual([
      ['otp_generate', 2, 'ref_node_http_call', 0.05, 2, 'ok', false],
      ['otp_generate+info', 2, 'ref_node_http_call', 0.042, 1.15, 'ok', false],
      ['verify_otp', 2, 'baseline', 0, 2, 'ok', false],
    ]);
    expect(caseFigures(outcomes([300, 300, 300], [400, 400, 400])).map((c) => c.result)).toEqual([
      'over floor',
      'over floor',
      'ok',
    ]);
  });

  it('calls a case NOISY when its rounds disagree by more than 15%', () => {
    const noisy = outcomes([150, 300, 240], [200, 300, 250]);
    expect(caseFigures(noisy)[0]).toMatchObject({ ratio: 2, noisy: true });
    expect(formatTable(noisy)).toMatch(/otp_generate +memory, warn .* 240 +120 node:http +2 +25% +<= 2 .* ok NOISY/);
  });

  it("leaves a smoke run unjudged, and writes the JSON report with today's fields and the paired ones", () => {
    expect(caseFigures(outcomes([300, 300, 300], [400, 400, 400]), false).map((c) => c.result)).toEqual([
      'not judged',
      'not judged',
      'not judged',
    ]);
    const report = jsonReport(
      outcomes([190, 300, 240], [200, 300, 250]),
      { records: 10, heapBytes: 1500, bytesPerRecord: 150, rssBytesPerRecord: 300 },
      true,
    );
    expect(report.baseline).toEqual({ req_per_s: 100, cpu_us_per_answer: 40, runs: 4 });
    expect(report.cases[0]).toEqual({
      name: 'otp_generate',
      store: 'memory',
      log: 'warn',
      req_per_s: 100,
      cpu_us_per_answer: 240,
      multiple: 6,
      p50_ms: 1,
      p99_ms: 2,
      ratio: 2,
      ratio_to: 'ref_node_http_call',
      spread: 0.05,
      round_ratios: [1.9, 2, 2],
      references: { ref_node_http_call: 120, ref_upstream_call: null, ref_axios_http_call: null, baseline: 40 },
      // No ref_upstream_call in this run: what one call costs is unknown, and so is the own work.
      own_us: null,
      floor: 2,
      result: 'ok',
      noisy: false,
    });
    expect(report.references).toEqual([
      expect.objectContaining({ name: 'ref_node_http_call', runs: 6, cpu_us_per_answer: 120, result: 'reference' }),
    ]);
    expect(report).toMatchObject({ memory_bytes_per_code: 150, memory_floor_bytes: 160 });
  });
});

describe('bench own work', () => {
  const refUpstream = CASES.find((c) => c.name === 'ref_upstream_call')!;
  const verifyOtp = CASES.find((c) => c.name === 'verify_otp')!;
  const login = CASES.find((c) => c.name === 'login')!;

  it('takes from each case the echo and, per upstream call, what one call through the client adds to the echo', () => {
    const figures = caseFigures([
      { benchCase: BASELINE, runs: [run(40)] },
      { benchCase: refUpstream, runs: [run(100)], paired: [run(90)] },
      { benchCase: otpGenerate, runs: [run(240)], paired: [run(90)] },
      { benchCase: verifyOtp, runs: [run(80)], paired: [run(40)] },
      { benchCase: login, runs: [run(600)], paired: [run(90)] },
    ]);
    const own = Object.fromEntries(figures.map((c) => [c.name, c.own_us]));
    // otp_generate: 240 - 40 - 1 x (100 - 40); verify_otp makes no call: 80 - 40; login: 2.5 calls an answer.
    expect(own).toEqual({ ref_upstream_call: null, otp_generate: 140, verify_otp: 40, login: 410 });
    expect(
      formatTable([
        { benchCase: BASELINE, runs: [run(40)] },
        { benchCase: verifyOtp, runs: [run(80)], paired: [run(40)] },
      ]),
    ).toMatch(/verify_otp .* 2 +40 +ok/);
  });
});

describe("bench funnel's cost", () => {
  const withFunnel = CASES.find((c) => c.name === 'login+funnel')!;

  it('reads the login with the funnel on against the same login with it off, run right before each round, at most 5% more', () => {
    expect(PAIRING[withFunnel.ratioTo!]).toMatchObject({
      name: 'login-funnel-off',
      kind: 'login',
      service: { funnel: false },
    });
    const figures = (on: number[]) =>
      caseFigures([
        { benchCase: BASELINE, runs: [run(40)] },
        { benchCase: withFunnel, runs: on.map((m) => run(m)), paired: [run(1000), run(1100), run(1000)] },
      ])[0]!;
    expect(figures([1040, 1150, 1030])).toMatchObject({
      ratio: 1.04,
      ratio_to: 'login-funnel-off',
      result: 'ok',
      references: { 'login-funnel-off': 1000 },
    });
    expect(figures([1080, 1190, 1070]).result).toBe('over floor');
  });
});

describe('bench Redis', () => {
  const missing = () => false;

  it('refuses a run with a Redis case when redis-server is missing, saying how to install it', () => {
    expect(setupRefusal({ ...parseOptions([]), cases: ['verify_otp@redis'] }, missing)).toMatch(
      /apt-get install redis-server.*--skip-redis/,
    );
    expect(setupRefusal(parseOptions([]), missing)).toMatch(/apt-get install redis-server/);
  });

  it('runs without redis-server when told to skip the Redis cases, or when none is selected', () => {
    expect(setupRefusal(parseOptions(['--skip-redis']), missing)).toBeUndefined();
    expect(setupRefusal({ ...parseOptions([]), cases: ['verify_otp'] }, missing)).toBeUndefined();
    expect(setupRefusal(parseOptions([]), () => true)).toBeUndefined();
  });
});

describe('bench profile summary', () => {
  it('ranks functions by self time and leaves idle time out', () => {
    const frame = (id: number, functionName: string) => ({
      id,
      callFrame: { functionName, url: 'file:///x.js', lineNumber: 0 },
    });
    const { busyMs, functions } = hotFunctions({
      nodes: [frame(1, '(idle)'), frame(2, 'parse'), frame(3, 'hash')],
      samples: [1, 2, 3, 2],
      timeDeltas: [5000, 1000, 500, 1000],
    });
    expect(busyMs).toBe(2.5);
    expect(functions.map((f) => [f.name.split(' ')[0], f.selfMs])).toEqual([
      ['parse', 2],
      ['hash', 0.5],
    ]);
  });
});

describe('bench smoke run', () => {
  // The test command's bench smoke (scripts/test.sh) runs every case through `npm run bench`; this
  // holds what that run does not check, on as few cases as show it: fresh instances, shared references, memory.
  it('runs each service case on a fresh instance, pairs every case with one run of its reference, and measures the memory per pending code', async () => {
    const options = {
      ...parseOptions(['--smoke']),
      duration: 1,
      connections: 10,
      records: 20_000,
      cases: ['ref_upstream_call', 'noop_action', 'otp_generate', 'memory'],
    };
    const lines: string[] = [];
    const report = await runBench(options, (line) => lines.push(line));
    expect(verdict(report.outcomes, report.memory)).toEqual({ ok: true, problems: [] });
    // Each service case on a fresh instance: no case's figure carries the heap another case grew.
    const fresh = lines
      .filter((line) => line.includes('a fresh service instance'))
      .map((line) => line.split(':')[0]!.replace('.. ', ''));
    expect(fresh).toEqual(['noop_action', 'otp_generate']);
    const ran = report.outcomes.filter((o) => o.runs?.length).map((o) => o.benchCase.name);
    expect(ran).toEqual(['baseline', 'ref_upstream_call', 'noop_action', 'otp_generate']);
    // Smoke: one run of each reference, shared by every case paired with it.
    const paired = (name: string) => report.outcomes.find((o) => o.benchCase.name === name)!.paired![0];
    expect(paired('otp_generate')).toBe(paired('ref_upstream_call'));
    expect(report.memory!.bytesPerRecord).toBeGreaterThan(0);
  }, 180_000);
});

describe('bench tail latency', () => {
  const login = CASES.find((c) => c.name === 'login')!;
  const paced = (load: number, build: 'new' | 'base', p99: number, overrides: Partial<LoadResult> = {}): TailRun => ({
    load,
    rate: Math.round(800 * load),
    build,
    result: result({ kind: 'login', rps: Math.round(800 * load), p50: 3, p99, ...overrides }),
  });
  /** Three rounds per load; each round's base and new runs with the p99s given. */
  const outcomes = (p99s: Record<number, Array<[number, number]>>, withBase = true): CaseOutcome[] => [
    { benchCase: BASELINE, runs: [run(40)] },
    {
      benchCase: login,
      runs: [run(1200)],
      paired: [run(90)],
      tail: {
        saturating: { new: 820, ...(withBase ? { base: 800 } : {}) },
        basis: 800,
        runs: TAIL_LOADS.flatMap((load) =>
          p99s[load]!.flatMap(([base, mine]) => [
            ...(withBase ? [paced(load, 'base', base)] : []),
            paced(load, 'new', mine),
          ]),
        ),
      },
    },
  ];
  const steady = {
    0.5: [
      [10, 9],
      [10, 10],
      [11, 10],
    ] as Array<[number, number]>,
    0.9: [
      [20, 20],
      [22, 21],
      [20, 21],
    ] as Array<[number, number]>,
  };

  it('paces the login pair at 50% and 90% of its saturating rate', () => {
    expect(TAIL_CASE).toBe('login');
    expect(TAIL_LOADS).toEqual([0.5, 0.9]);
  });

  it('reports p50 and p99 per build and load, and judges only the p99 at 90% against the base', () => {
    const figures = tailFigures(outcomes(steady))!;
    expect(figures).toMatchObject({
      case: 'login',
      saturating_req_per_s_new: 820,
      saturating_req_per_s_base: 800,
      basis_req_per_s: 800,
      floor: 1.1,
      slack_ms: 1,
      result: 'ok',
    });
    expect(figures.levels.map((l) => [l.load, l.rate, l.p99_ms_base, l.p99_ms_new, l.p99_ratio, l.result])).toEqual([
      [0.5, 400, 10, 10, 0.91, 'not judged'],
      [0.9, 720, 20, 21, 1, 'ok'],
    ]);
    expect(figures.levels[1]).toMatchObject({
      p50_ms_base: 3,
      p50_ms_new: 3,
      req_per_s_base: 720,
      req_per_s_new: 720,
      round_p99_ratios: [1, 0.955, 1.05],
    });
  });

  it('fails the p99 at 90% above 1.1 of the base and more than 1 ms apart; NOISY when its rounds disagree by more than 20%', () => {
    const worse = tailFigures(
      outcomes({
        ...steady,
        0.9: [
          [20, 24],
          [20, 23],
          [21, 24],
        ],
      }),
    )!;
    expect(worse.levels[1]).toMatchObject({ p99_ratio: 1.15, result: 'over floor', noisy: false });
    expect(worse.result).toBe('over floor');
    // 4 ms against 5: a quarter more, but one step of autocannon's whole-millisecond histogram.
    expect(
      tailFigures(
        outcomes({
          ...steady,
          0.9: [
            [4, 5],
            [4, 5],
            [4, 5],
          ],
        }),
      )!.levels[1],
    ).toMatchObject({ p99_ratio: 1.25, result: 'ok' });
    expect(
      tailFigures(
        outcomes({
          ...steady,
          0.9: [
            [20, 16],
            [20, 21],
            [20, 22],
          ],
        }),
      )!.levels[1],
    ).toMatchObject({ noisy: true });
  });

  it('judges nothing without a base build or in a smoke run, and fails a paced run that failed', () => {
    expect(tailFigures(outcomes(steady, false))!).toMatchObject({
      saturating_req_per_s_base: null,
      result: 'not judged',
    });
    expect(tailFigures(outcomes(steady), false)!.result).toBe('not judged');
    const failing = outcomes(steady);
    failing[1]!.tail!.runs[0]!.result = result({ failures: 2, non2xx: 2 });
    expect(tailFigures(failing)!.result).toBe('failed');
    expect(verdict(failing).problems).toEqual([expect.stringContaining('login paced at 50% (base build): 2 failed')]);
  });

  it('prints both builds per load and writes them to the JSON report (`tail`), null when the case did not run paced', () => {
    expect(formatTail(tailFigures(outcomes(steady))!)).toMatch(
      /^90% +720 +720 -> 720 +3 -> 3 +20 -> 21 +1 +10% +<= 1\.1 or 1 ms +ok$/m,
    );
    const report = jsonReport(outcomes(steady), undefined, true);
    expect(report.tail).toMatchObject({
      case: 'login',
      levels: [
        expect.objectContaining({
          load: 0.5,
          rate: 400,
          p50_ms_base: 3,
          p50_ms_new: 3,
          p99_ms_base: 10,
          p99_ms_new: 10,
        }),
        expect.objectContaining({ load: 0.9, rate: 720 }),
      ],
    });
    expect(jsonReport([{ benchCase: BASELINE, runs: [run(40)] }], undefined, true).tail).toBeNull();
  });
});

describe("bench challenge's cost", () => {
  const withChallenge = CASES.find((c) => c.name === 'otp_generate+challenge')!;

  it('reads otp_generate with the challenge adaptive against the same with it off, run right before each round, at most 5% more', () => {
    expect(PAIRING[withChallenge.ratioTo!]).toMatchObject({
      name: 'otp_generate-challenge-off',
      kind: 'otp_generate',
      service: { challenge: 'off' },
      phoneDigit: withChallenge.phoneDigit,
    });
    expect(withChallenge).toMatchObject({
      kind: 'otp_generate',
      service: { store: 'memory', challenge: 'adaptive' },
      floor: 1.05,
      thisBuildOnly: true,
    });
    const figures = (on: number[]) =>
      caseFigures([
        { benchCase: BASELINE, runs: [run(40)] },
        { benchCase: withChallenge, runs: on.map((m) => run(m)), paired: [run(500), run(520), run(500)] },
      ])[0]!;
    expect(figures([520, 540, 515])).toMatchObject({
      ratio: 1.04,
      ratio_to: 'otp_generate-challenge-off',
      result: 'ok',
    });
    expect(figures([540, 560, 530]).result).toBe('over floor');
  });

  it('runs both halves with the defences on, at thresholds no bench load crosses, one setting apart', () => {
    const config = (challenge: 'off' | 'adaptive') =>
      benchConfig({ upstreams: 'http://127.0.0.1:1', store: 'memory', logLevel: 'warn', challenge });
    const [on, off] = [config('adaptive'), config('off')];
    expect([on.challenge.mode, off.challenge.mode]).toEqual(['adaptive', 'off']);
    expect({ ...on, challenge: { ...on.challenge, mode: 'off' } }).toEqual(off);
    expect(on.rate_limits.enabled).toBe(true);
    expect(on.sms.pumping.enabled).toBe(true);
    // One load generator is one client sending to one number range: the defaults would challenge it within seconds.
    expect(on.challenge.client_sends).toBeGreaterThan(1e8);
    expect(on.challenge.client_identifiers).toBeGreaterThan(1e8);
    expect(on.challenge.network_24.identifiers).toBeGreaterThan(1e8);
    expect(on.challenge.network_48.sends).toBeGreaterThan(1e8);
    expect(on.challenge.country_velocity_floor).toBeGreaterThan(1e8);
    expect(on.challenge.range_velocity_floor).toBeGreaterThan(1e8);
    expect(on.sms.pumping.prefix_sends_per_hour).toBeGreaterThan(1e8);
    expect(on.rate_limits.sends_per_ip_per_hour).toBeGreaterThan(1e8);
    // The other cases keep the defences off.
    expect(
      benchConfig({ upstreams: 'http://127.0.0.1:1', store: 'memory', logLevel: 'warn' }).rate_limits.enabled,
    ).toBe(false);
  });

  it('turns an adaptive setting off without the defences on: why the pair turns them on, and asks the service which mode its gate runs in', () => {
    const gate = createChallengeGate(
      benchConfig({ upstreams: 'http://127.0.0.1:1', store: 'memory', logLevel: 'warn' }),
      {
        limiter: createMemoryRateLimiter(),
        now: Date.now,
        secret: 's'.repeat(32),
        log: createLogger('silent'),
        spend: async () => true,
        history: { has: async () => false },
      },
    );
    // Without the defences on, an adaptive setting is off: the reason the case turns them on, and checks.
    expect(gate.mode).toBe('off');
  });
});

describe('bench tail and challenge pair, a short real run', () => {
  it('paces the login pair at 50% and 90% of its rate, and answers every request of the challenge pair with no challenge', async () => {
    const options = {
      ...parseOptions(['--smoke']),
      duration: 0.5,
      connections: 10,
      cases: ['login', 'otp_generate+challenge'],
    };
    const lines: string[] = [];
    const report = await runBench(options, (line) => lines.push(line));
    // Every answer `success: true`: a `challenge_required` would count as a failure.
    expect(verdict(report.outcomes)).toEqual({ ok: true, problems: [] });
    expect(lines).toEqual(
      expect.arrayContaining([
        '.. otp_generate+challenge: a fresh service instance (memory, warn, defences on, challenge adaptive)',
        '.. otp_generate-challenge-off: a fresh service instance (memory, warn, defences on, challenge off)',
        '.. login: tail latency, smoke: one 0.5 s paced run per load, not judged',
      ]),
    );
    const pair = report.outcomes.find((o) => o.benchCase.name === 'otp_generate+challenge')!;
    expect([pair.runs!.length, pair.paired!.length, pair.runs![0]!.result.requests > 10]).toEqual([1, 1, true]);
    const login = report.outcomes.find((o) => o.benchCase.name === 'login')!;
    const basis = login.runs![0]!.result.rps;
    expect(login.tail).toMatchObject({ saturating: { new: basis }, basis });
    expect(login.tail!.runs.map((r) => [r.load, r.build, r.rate])).toEqual([
      [0.5, 'new', Math.max(1, Math.round(basis * 0.5))],
      [0.9, 'new', Math.max(1, Math.round(basis * 0.9))],
    ]);
    expect(login.tail!.runs.every((r) => r.result.requests > 0)).toBe(true);
    expect(tailFigures(report.outcomes, false)).toMatchObject({ case: 'login', result: 'not judged' });
  }, 180_000);
});
