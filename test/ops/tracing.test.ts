import { Writable } from 'node:stream';
import pino from 'pino';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { startService, type Service } from '../../src/service';
import { walkEveryJourney } from '../../scripts/docs/journey-examples';
import { testConfig } from '../support/app';
import { startOtlpReceiver, type ExportedSpan, type OtlpReceiver } from '../support/otlp-receiver';

/*
 * Traces as a collector receives them from the running service (the sandbox, a real HTTP server,
 * OTLP/HTTP protobuf decoded with the project's own definitions): a phone login's two requests,
 * each one trace continuing the caller's, its action and journey step on a span, a span per
 * upstream call and per SMS provider considered, no personal data anywhere in what was sent, and
 * the log lines naming the trace.
 */

const mario = sandboxSeedUsers[0]!;
const PHONE = '+393331234567';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('traces of a phone login, as the collector receives them', () => {
  let receiver: OtlpReceiver;
  let service: Service;
  const lines: Array<Record<string, unknown>> = [];
  const secrets: string[] = [PHONE, PHONE.slice(3), mario.email, mario.uid];

  const post = (action: string, body: object, headers: Record<string, string> = {}) =>
    fetch(`${service.url}/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const codeFor = (phone: string) =>
    service
      .sandbox!.outbox.list('sms')
      .filter((m) => m.to.includes(phone))
      .at(-1)?.code;
  const fault = (provider: string, which: string) =>
    fetch(`${service.sandbox!.baseUrl}/faults/sms/${provider}/${which}`, { method: 'POST' });
  const traceOf = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  const childrenOf = (span: ExportedSpan, spans: ExportedSpan[]) => spans.filter((s) => s.parentSpanId === span.spanId);
  const only = (spans: ExportedSpan[], name: string) => {
    const found = spans.filter((s) => s.name === name);
    expect(found.map((s) => s.name)).toEqual([name]);
    return found[0]!;
  };

  let login: Response;
  let verify: Response;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
          done();
        },
      }),
    );
    service = await startService(
      testConfig({
        sandbox: { enabled: true },
        server: { host: '127.0.0.1', port: 0, trust_proxy_hops: 1 },
        tracing: { enabled: true, otlp_url: receiver.url, service_name: 'lfa-under-test' },
        sms: { breaker: { failures: 1 } },
      }),
      { log, otpLog: pino({ level: 'silent' }) },
    );
    login = await post('FeLogin', { identifier: PHONE }, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    const code = codeFor(PHONE)!;
    verify = await post('FeVerifyOtp', { flow: 'phone', phone: PHONE, otp_code: code });
    const answer = (await verify.clone().json()) as {
      data: { access_token: string; proof: string; next_step: number };
    };
    expect(answer.data.next_step).toBe(90);
    secrets.push(code, answer.data.access_token, answer.data.proof);
    await service.deps.tracing!.flush();
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  it("continues the caller's trace and answers with its id (traceresponse)", () => {
    expect(login.headers.get('traceresponse')).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    const server = only(traceOf(CALLER_TRACE), 'POST FeLogin');
    expect(server).toMatchObject({
      kind: 'server',
      parentSpanId: CALLER_SPAN,
      serviceName: 'lfa-under-test',
      attributes: { 'http.route': 'FeLogin', 'http.response.status_code': 200, 'lfa.outcome': 'ok' },
    });
    expect(login.headers.get('traceresponse')).toBe(`00-${CALLER_TRACE}-${server.spanId}-01`);
  });

  it('names the action and the journey step on a span under the request, and each upstream call under it', () => {
    const spans = traceOf(CALLER_TRACE);
    const action = only(childrenOf(only(spans, 'POST FeLogin'), spans), 'FeLogin');
    expect(action.attributes).toMatchObject({ 'lfa.flow': 'phone', 'lfa.step.to': 14, 'lfa.outcome': 'ok' });
    const calls = childrenOf(action, spans);
    // The SMS: the first provider considered took it, and its HTTP call is under that attempt.
    const sms = only(calls, 'sms.attempt');
    expect(sms.attributes).toMatchObject({
      'lfa.sms.provider': 'gateway',
      'lfa.sms.channel': 'sms',
      'lfa.sms.attempt': 1,
      'lfa.sms.outcome': 'accepted',
    });
    // The gateway's HTTP call, named after the call (upstream `sms`, endpoint `send`), never its URL.
    expect(childrenOf(sms, spans).map((s) => [s.name, s.kind, s.attributes['http.response.status_code']])).toEqual([
      ['sms.send', 'client', 200],
    ]);
  });

  it('starts a trace of its own for the second request, which sent no traceparent, with the step to 90', () => {
    const [, traceId, serverId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(verify.headers.get('traceresponse')!)!;
    expect(traceId).not.toBe(CALLER_TRACE);
    const spans = traceOf(traceId!);
    const server = only(spans, 'POST FeVerifyOtp');
    expect(server.spanId).toBe(serverId);
    expect(server.parentSpanId).toBeUndefined();
    const action = only(childrenOf(server, spans), 'FeVerifyOtp');
    expect(action.attributes).toMatchObject({ 'lfa.flow': 'phone', 'lfa.step.to': 90 });
    // The identity provider's calls (who holds the phone, the token), each a client span with its answer.
    const calls = childrenOf(action, spans).filter((s) => s.kind === 'client');
    expect(calls.map((s) => s.name)).toEqual(expect.arrayContaining([expect.stringMatching(/^identity\./)]));
    for (const call of calls)
      expect(call.attributes).toMatchObject({ 'http.response.status_code': 200, 'lfa.upstream.outcome': 'ok' });
  });

  it('names the trace on every log line of a traced request', () => {
    const [, traceId] = /^00-([0-9a-f]{32})-/.exec(verify.headers.get('traceresponse')!)!;
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines.length).toBeGreaterThanOrEqual(2);
    for (const line of requestLines) expect(line).toMatchObject({ trace_id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const verifyLines = lines.filter((l) => l.trace_id === traceId);
    expect(verifyLines.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['request', 'login flow step', 'upstream call']),
    );
  });

  it('carries no phone, email, uid, code, proof or token in any byte it sent', () => {
    const sent = receiver.bodies.map((b) => b.toString('latin1')).join('\n');
    expect(receiver.spans.length).toBeGreaterThan(5);
    for (const secret of secrets) expect(sent).not.toContain(secret);
    for (const secret of secrets) expect(JSON.stringify(receiver.spans)).not.toContain(secret);
  });

  it('carries none of the people of every journey, walked end to end (logins, registrations, a phone added or declined)', async () => {
    const examples = await walkEveryJourney(service.url);
    await service.deps.tracing!.flush();
    expect(examples.length).toBeGreaterThanOrEqual(6);
    // Each phone as sent (E.164) and as dialled at home (without +39), each email and uid.
    const people = examples.flatMap(({ person }) => [
      ...person.phones.flatMap((phone) => [phone, phone.slice(3)]),
      person.email,
      person.uid,
    ]);
    expect(people.length).toBeGreaterThanOrEqual(examples.length * 2);
    const sent = receiver.bodies.map((b) => b.toString('latin1')).join('\n');
    for (const identifier of people) expect(sent).not.toContain(identifier);
    // Every journey's actions were traced: FeRegister and FeAddPhone among them.
    const actions = new Set(receiver.spans.filter((s) => s.kind === 'internal').map((s) => s.name));
    for (const action of new Set(examples.flatMap((e) => e.requests.map((r) => r.action))))
      expect(actions).toContain(action);
  }, 60_000);

  it('shows a provider skipped with its circuit open, and the one that sent the code', async () => {
    expect((await fault('gateway', 'error_5xx')).ok).toBe(true);
    // The first send fails over (the gateway answers 503, which opens its circuit at one failure)...
    const failedOver = await post('FeLogin', { identifier: '+393331230001' });
    // ...and the next skips the gateway without asking it.
    const skipped = await post('FeLogin', { identifier: '+393331230002' });
    await fault('gateway', 'none');
    await service.deps.tracing!.flush();
    const smsSpans = (response: Response) => {
      const [, traceId] = /^00-([0-9a-f]{32})-/.exec(response.headers.get('traceresponse')!)!;
      const spans = traceOf(traceId!);
      return { spans, sends: spans.filter((s) => s.name === 'sms.attempt') };
    };

    const first = smsSpans(failedOver);
    expect(first.sends.map((s) => s.attributes)).toEqual([
      expect.objectContaining({ 'lfa.sms.provider': 'gateway', 'lfa.sms.attempt': 1, 'lfa.sms.outcome': 'error' }),
      expect.objectContaining({ 'lfa.sms.provider': 'twilio', 'lfa.sms.attempt': 2, 'lfa.sms.outcome': 'accepted' }),
    ]);
    expect(first.sends[0]!.failed).toBe(true);
    const gatewayCall = childrenOf(first.sends[0]!, first.spans);
    expect(gatewayCall.map((s) => [s.kind, s.failed, s.attributes['http.response.status_code']])).toEqual([
      ['client', true, 503],
    ]);

    const second = smsSpans(skipped);
    expect(second.sends.map((s) => s.attributes)).toEqual([
      expect.objectContaining({
        'lfa.sms.provider': 'gateway',
        'lfa.sms.skipped': true,
        'lfa.sms.outcome': 'circuit_open',
      }),
      expect.objectContaining({ 'lfa.sms.provider': 'twilio', 'lfa.sms.attempt': 2, 'lfa.sms.outcome': 'accepted' }),
    ]);
    // Skipped means not asked: no HTTP call under it.
    expect(childrenOf(second.sends[0]!, second.spans)).toEqual([]);
    expect(childrenOf(second.sends[1]!, second.spans).map((s) => s.name)).toEqual(['sms_twilio.messages']);
  });
});
