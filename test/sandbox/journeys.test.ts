import pino from 'pino';
import request from 'supertest';
import { recordScenario, sandboxClient, scenarios, type SandboxClient } from '../../scripts/record-journeys';
import { replayRecording } from '../../scripts/replay';
import { journeyRecorderFor } from '../../src/flows/journey-recorder';
import type { RecordedJourney } from '../../src/flows/journey-recording';
import { startService, type Service } from '../../src/service';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * GET /_sandbox/journeys on the real service over the sandbox (as `npm start` runs it): every
 * journey of scripts/record-journeys.ts is recorded as one journey, with no code, proof or
 * token in it, and replays against the machine (record, then replay: the round trip the
 * fixtures rely on).
 */

const silent = pino({ level: 'silent' });

describe('GET /_sandbox/journeys', () => {
  let service: Service;
  let client: SandboxClient;
  /** Every code, proof and token the service handed out during the journeys. */
  const secrets = new Set<string>();
  const recorded: RecordedJourney[] = [];

  beforeAll(async () => {
    service = await startService(testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port: 0 } }), {
      log: silent,
      otpLog: silent,
    });
    const plain = sandboxClient(service.url);
    // The same client, noting every secret it sees on the way.
    client = {
      ...plain,
      fe: async (action, body, expected) => {
        const data = await plain.fe(action, body, expected);
        for (const field of ['access_token', 'proof', 'phone_proof', 'pending_proof', 'register_proof'])
          if (typeof data[field] === 'string') secrets.add(data[field] as string);
        return data;
      },
      nextCode: async (to) => {
        const code = await plain.nextCode(to);
        secrets.add(code);
        return code;
      },
    };
    for (const scenario of scenarios) recorded.push(await recordScenario(client, scenario));
  });
  afterAll(async () => {
    await service.close();
  });

  it('groups each journey into one recording, its requests in order', () => {
    expect(recorded.map((j) => j.requests.map((r) => r.action))).toEqual([
      ['FeLogin', 'FeVerifyOtp', 'FeVerifyOtp'],
      ['FeLogin', 'FeVerifyOtp', 'FeRegister', 'FeVerifyOtp', 'FeRegister'],
      ['FeLogin', 'FeVerifyOtp'],
      ['FeLogin', 'FeVerifyOtp', 'FeVerifyOtp'],
      ['FeLogin', 'FeVerifyOtp', 'FeVerifyOtp', 'FeAddPhone', 'FeVerifyOtp'],
      ['FeLogin', 'FeVerifyOtp', 'FeAddPhone', 'FeVerifyOtp'],
      ['FeRegister', 'FeVerifyOtp', 'FeRegister', 'FeAddPhone', 'FeVerifyOtp', 'FeUpdateProfile'],
    ]);
    const last = recorded.at(-1)!;
    expect(last.about).toEqual(expect.arrayContaining(['email:sara.neri@example.com', 'phone:+393337770707']));
    // Each request: where it resumed, the states entered, the steps, the effects with their outcomes, the answer.
    expect(last.requests[4]).toMatchObject({
      n: 5,
      action: 'FeVerifyOtp',
      body: { flow: 'email_register_phone', phone: '+393337770707', otp_code: '***', pending_proof: '***' },
      proof_claims: { field: 'pending_proof', claims: { kind: 'pending', step: 62, phone: '+393337770707' } },
      resumed: 'awaitingNewPhoneCode',
      steps: [42, 90],
      answer: {
        status: 200,
        success: true,
        data: { next_step: 90, access_token: '***', proof: '***' },
        state: 'loggedIn',
      },
    });
    expect(last.requests[4]!.states.at(-1)).toBe('loggedIn');
    expect(last.requests[4]!.effects.map((e) => [e.name, e.outcome])).toEqual([
      ['verifyOtp', 'ok'],
      ['searchUserByPhone', 'ok'],
      ['updateProfile', 'ok'],
      ['issueToken', 'ok'],
      ['ingestLogin', 'ok'],
    ]);
    expect(last.requests[4]!.effects[0]).toEqual({
      name: 'verifyOtp',
      input: { key: '+393337770707', code: '***' },
      outcome: 'ok',
      output: 'ok',
    });
    expect(last.requests[4]!.effects[3]!.output).toMatchObject({ access_token: '***' });
    // A refusal is recorded with its reason.
    expect(recorded[0]!.requests[1]!.answer).toMatchObject({
      success: false,
      error: 'OTP non valido.',
      data: { reason: 'invalid', valid: false },
    });
  });

  it('answers no code, no proof and no token', async () => {
    expect(secrets.size).toBeGreaterThan(20);
    const listing = await request(service.url).get('/_sandbox/journeys');
    expect(listing.status).toBe(200);
    expect(listing.body.data.journeys).toHaveLength(scenarios.length);
    // A code is six digits: whole, as a leak would show it, not inside a phone or a timestamp that happens to carry the same digits.
    const shown = (secret: string) =>
      /^\d+$/.test(secret) ? new RegExp(`(?<!\\d)${secret}(?!\\d)`).test(listing.text) : listing.text.includes(secret);
    for (const secret of secrets) expect(shown(secret) ? secret : null).toBeNull();
    expect(listing.text).not.toMatch(/v1\.[A-Za-z0-9_-]{10,}|eyJ[A-Za-z0-9_-]{10,}/);
  });

  it('lists the most recent journey first, answers one by id and filters by phone or email', async () => {
    const ids = (await request(service.url).get('/_sandbox/journeys')).body.data.journeys.map(
      (j: RecordedJourney) => j.id,
    );
    expect(ids).toEqual(recorded.map((j) => j.id).reverse());
    const one = await request(service.url).get(`/_sandbox/journeys/${recorded[1]!.id}`);
    expect(one.body.data).toEqual({ ...recorded[1], name: undefined });
    const about = async (who: string) =>
      (await request(service.url).get('/_sandbox/journeys').query({ about: who })).body.data.journeys.map(
        (j: RecordedJourney) => j.id,
      );
    expect(await about('SARA.NERI@example.com')).toEqual([recorded.at(-1)!.id]);
    expect(await about('+39 333 777 0707')).toEqual([recorded.at(-1)!.id]);
    expect(await about('nobody@example.com')).toEqual([]);
    expect((await request(service.url).get('/_sandbox/journeys/j-999')).status).toBe(404);
  });

  it('records journeys the machine replays as they ran', async () => {
    for (const journey of recorded) expect((await replayRecording(journey)).divergence).toBeUndefined();
  });

  it('answers the newest code of one recipient with ?to=, however the phone is written', async () => {
    const newest = recorded.at(-1)!;
    expect(newest).toBeDefined();
    for (const to of ['+393337770707', '+39 333 777 0707', ' 393337770707']) {
      const res = await request(service.url).get('/_sandbox/outbox').query({ to });
      expect(res.body.data.messages.length).toBeGreaterThan(0);
      expect(res.body.data.messages.every((m: { to: string }) => m.to === '+393337770707')).toBe(true);
      expect(res.body.data.code).toBe(res.body.data.messages[0].code);
    }
    // An unencoded `+` arrives as a space: the same recipient.
    const raw = await request(service.url).get('/_sandbox/outbox?to=+393337770707');
    expect(raw.body.data.messages.length).toBeGreaterThan(0);
  });
});

describe('recording is on in the sandbox and with debug, off otherwise', () => {
  it('records with `debug` on, without the sandbox', async () => {
    const deps = testDeps(testConfig({ debug: true }));
    const app = testApp(deps).callback();
    const res = await request(app).post('/FeLogin').send({ identifier: 'carla@example.com', method: 'password' });
    expect(res.body.data).toMatchObject({ next_step: 60 });
    const [journey] = journeyRecorderFor(deps)!.list();
    expect(journey).toMatchObject({
      about: ['email:carla@example.com'],
      requests: [{ n: 1, action: 'FeLogin', resumed: 'enteringIdentifier', steps: [60], effects: [] }],
    });
    await deps.close();
  });

  it('records nothing with both off: the runner gets no recorder', async () => {
    const deps = testDeps(testConfig());
    expect(journeyRecorderFor(deps)).toBeUndefined();
    await deps.close();
  });
});

describe('GET /_sandbox/journeys with debug on, outside the sandbox (a staging server)', () => {
  const KEY = 'internal-key-for-journeys';
  let service: Service;
  beforeAll(async () => {
    service = await startService(
      testConfig({
        debug: true,
        sandbox: { enabled: false },
        security: { internal_key: KEY },
        server: { host: '127.0.0.1', port: 0 },
      }),
      { log: silent, otpLog: silent },
    );
    await request(service.url).post('/FeLogin').send({ identifier: 'carla@example.com', method: 'password' });
  });
  afterAll(async () => {
    await service.close();
  });

  it('answers no one without the internal key: every email, phone and uid that logged in is there', async () => {
    for (const path of ['/_sandbox/journeys', '/_sandbox/journeys/j-1', '/_sandbox/journeys?about=carla@example.com']) {
      const res = await request(service.url).get(path);
      expect(res.body).toMatchObject({ success: false, data: { reason: 'proof_required' } });
      expect(res.text).not.toContain('carla');
    }
    expect((await request(service.url).get('/_sandbox/journeys').set('x-internal-key', 'wrong')).body.success).toBe(
      false,
    );
  });

  it('answers the internal key', async () => {
    const res = await request(service.url).get('/_sandbox/journeys').set('x-internal-key', KEY);
    expect(res.body).toMatchObject({ success: true, data: { journeys: [{ about: ['email:carla@example.com'] }] } });
  });
});
