import { parseOptions, UsageError } from '../../bench/options';
import { requestsFor, type LoadResult } from '../../bench/load';
import { hotFunctions } from '../../bench/profile';
import { caseFigures, formatTable, jsonReport, verdict, type CaseOutcome } from '../../bench/report';
import { BASELINE, REFERENCE_CASES, SERVICE_CASES } from '../../bench/cases';
import { runBench } from '../../bench/run';

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
const otpGenerate = SERVICE_CASES.find((c) => c.name === 'otp_generate')!;

describe('bench options', () => {
  it('runs each case for a second with no warm-up in smoke mode', () => {
    expect(parseOptions(['--smoke'])).toMatchObject({ smoke: true, duration: 1, warmup: 0, connections: 50, records: 100_000 });
  });

  it('defaults to ten seconds per case, 50 connections and one million records', () => {
    expect(parseOptions([])).toMatchObject({ smoke: false, duration: 10, warmup: 3, connections: 50, records: 1_000_000, cases: null, redis: true, pin: true, jsonFile: null });
  });

  it('takes a file for the JSON figures', () => {
    expect(parseOptions(['--json', 'out.json']).jsonFile).toBe('out.json');
    expect(() => parseOptions(['--json'])).toThrow(UsageError);
  });

  it('takes duration, connections and cases in both spellings', () => {
    expect(parseOptions(['--duration', '3', '--connections=20', '--cases', 'verify_otp,login'])).toMatchObject({ duration: 3, connections: 20, cases: ['verify_otp', 'login'] });
  });

  it('refuses an unknown option, a value that is not a number, or a case that does not exist', () => {
    expect(() => parseOptions(['--fast'])).toThrow(UsageError);
    expect(() => parseOptions(['--duration', 'ten'])).toThrow(UsageError);
    expect(() => parseOptions(['--cases', 'verify_otp,verify'])).toThrow(/unknown: verify/);
  });
});

describe('bench load requests', () => {
  const body = (request: { setupRequest?: (r: object, c: Record<string, string>) => { body?: string } }, context: Record<string, string> = {}) =>
    request.setupRequest!({}, context).body;

  it('sends every otp_generate request to a new phone of the case range', () => {
    const { requests } = requestsFor({ kind: 'otp_generate', url: 'http://x', duration: 1, connections: 1, phonePrefix: '+3931', firstIndex: 7 });
    expect([body(requests[0]!), body(requests[0]!)]).toEqual(['{"uid":"+393100000007"}', '{"uid":"+393100000008"}']);
  });

  it('verifies each pre-issued key once and says when the keys ran out', () => {
    const { requests, state } = requestsFor({ kind: 'verify_otp', url: 'http://x', duration: 1, connections: 1, phonePrefix: '+3932', code: '482916', keys: 1 });
    expect(body(requests[0]!)).toBe('{"email":"+393200000000","otp_code":"482916"}');
    expect(state.exhausted).toBe(false);
    body(requests[0]!);
    expect(state.exhausted).toBe(true);
  });

  it('carries the code FeLogin answered into the FeVerifyOtp of the same connection', () => {
    const { requests } = requestsFor({ kind: 'login', url: 'http://x', duration: 1, connections: 1, phonePrefix: '+3933' });
    const context: Record<string, string> = {};
    expect(body(requests[0]!, context)).toBe('{"identifier":"+393300000000"}');
    requests[0]!.onResponse!(200, '{"success":true,"error":null,"data":{"next_step":14,"otp":{"otp":"123456"}}}', context, {});
    expect(body(requests[1]!, context)).toBe('{"flow":"phone","phone":"+393300000000","otp_code":"123456"}');
  });
});

describe('bench verdict', () => {
  it('passes when every case that ran answered without a failure, skipped ones included', () => {
    const outcomes: CaseOutcome[] = [{ benchCase: BASELINE, result: result() }, { benchCase: otpGenerate, skipped: 'redis-server not installed' }];
    expect(verdict(outcomes)).toEqual({ ok: true, problems: [] });
  });

  it('fails a case with a failed answer, naming what failed', () => {
    const { ok, problems } = verdict([{ benchCase: otpGenerate, result: result({ failures: 2, mismatches: 2, firstFailure: '{"success":false}' }) }]);
    expect(ok).toBe(false);
    expect(problems[0]).toContain('success:false 2');
  });

  it('fails a case that answered nothing', () => {
    expect(verdict([{ benchCase: otpGenerate, result: result({ requests: 0, rps: 0 }) }]).ok).toBe(false);
  });

  const cpu = (appMicrosPerRequest: number) => ({ appMicrosPerRequest, appCores: 1, loadCores: 1, otherCores: 0 });
  const otpGenerateInfo = SERVICE_CASES.find((c) => c.name === 'otp_generate+info')!;
  const judged = (appMicros: number, infoMicros: number): CaseOutcome[] => [
    { benchCase: BASELINE, result: result({ rps: 1000 }), cpu: cpu(100) },
    { benchCase: otpGenerate, result: result({ rps: 300 }), cpu: cpu(appMicros) },
    { benchCase: otpGenerateInfo, result: result({ rps: 250 }), cpu: cpu(infoMicros) },
  ];

  it('judges each case by its app CPU per answer as a multiple of the baseline’s, against its floor', () => {
    expect(caseFigures(judged(350, 380)).map((c) => [c.name, c.multiple, c.floor, c.result])).toEqual([
      ['otp_generate', 3.5, 4, 'ok'],
      ['otp_generate+info', 3.8, 1.15, 'ok'],
    ]);
    expect(caseFigures(judged(450, 600)).map((c) => c.result)).toEqual(['over floor', 'over floor']);
  });

  it('prints each multiple beside its floor', () => {
    const table = formatTable(judged(350, 380));
    expect(table).toMatch(/otp_generate +memory, warn .* 350 +3\.5 +<= 4 +ok/);
    expect(table).toMatch(/otp_generate\+info .* 3\.8 +x1\.15 of otp_generate +ok/);
  });

  it('leaves a smoke run unjudged, and writes the JSON report with every field', () => {
    expect(caseFigures(judged(450, 600), false).map((c) => c.result)).toEqual(['not judged', 'not judged']);
    const report = jsonReport(judged(350, 380), 1000, { records: 10, heapBytes: 1900, bytesPerRecord: 190, rssBytesPerRecord: 300 }, true);
    expect(report).toEqual({
      baseline: { req_per_s: 1000, cpu_us_per_answer: 100 },
      cases: [
        { name: 'otp_generate', store: 'memory', log: 'warn', req_per_s: 300, cpu_us_per_answer: 350, multiple: 3.5, p50_ms: 1, p99_ms: 2, floor: 4, result: 'ok' },
        { name: 'otp_generate+info', store: 'memory', log: 'info', req_per_s: 250, cpu_us_per_answer: 380, multiple: 3.8, p50_ms: 1, p99_ms: 2, floor: 1.15, result: 'ok' },
      ],
      references: [],
      memory_bytes_per_code: 190,
    });
  });
});

describe('bench transport references', () => {
  const cpu = (appMicrosPerRequest: number) => ({ appMicrosPerRequest, appCores: 1, loadCores: 1, otherCores: 0 });
  const answered = { kind: 'echo' as const, requests: 100, failures: 0, rps: 500, p50: 1, p99: 2, durationSeconds: 1, non2xx: 0, errors: 0, timeouts: 0, mismatches: 0, nextIndex: 0 };
  const outcomes: CaseOutcome[] = [
    { benchCase: BASELINE, result: { ...answered, rps: 1000 }, cpu: cpu(100) },
    { benchCase: REFERENCE_CASES[0]!, result: answered, cpu: cpu(600) },
  ];

  it('reports a reference as a multiple of the baseline, never judges it, and keeps it out of the baseline', () => {
    const report = jsonReport(outcomes, 1000, undefined, true);
    expect(report.baseline.cpu_us_per_answer).toBe(100);
    expect(report.cases).toEqual([]);
    expect(report.references).toEqual([expect.objectContaining({ name: 'ref_axios_call', multiple: 6, floor: null, result: 'reference' })]);
    expect(formatTable(outcomes)).toMatch(/ref_axios_call +- .* 600 +6 +reference/);
  });
});

describe('bench profile summary', () => {
  it('ranks functions by self time and leaves idle time out', () => {
    const frame = (id: number, functionName: string) => ({ id, callFrame: { functionName, url: 'file:///x.js', lineNumber: 0 } });
    const { busyMs, functions } = hotFunctions({
      nodes: [frame(1, '(idle)'), frame(2, 'parse'), frame(3, 'hash')],
      samples: [1, 2, 3, 2],
      timeDeltas: [5000, 1000, 500, 1000],
    });
    expect(busyMs).toBe(2.5);
    expect(functions.map((f) => [f.name.split(' ')[0], f.selfMs])).toEqual([['parse', 2], ['hash', 0.5]]);
  });
});

describe('bench smoke run', () => {
  it('answers every case of the service without a failure and measures the memory per pending code', async () => {
    const options = { ...parseOptions(['--smoke']), duration: 1, connections: 10, records: 20_000, cases: ['noop_action', 'otp_generate', 'verify_otp', 'login', 'get_user', 'ref_axios_call', 'ref_node_http_call', 'memory'] };
    const report = await runBench(options, () => {});
    expect(verdict(report.outcomes, report.memory)).toEqual({ ok: true, problems: [] });
    const ran = report.outcomes.filter((o) => o.result).map((o) => o.benchCase.name);
    expect(ran).toEqual(['baseline', 'ref_axios_call', 'ref_node_http_call', 'noop_action', 'otp_generate', 'verify_otp', 'login', 'get_user']);
    expect(report.memory!.bytesPerRecord).toBeGreaterThan(0);
  }, 60_000);
});
