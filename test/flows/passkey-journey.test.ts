import pino from 'pino';
import request from 'supertest';
import { replayRecording } from '../../scripts/replay';
import { deepMerge } from '../../src/core/config/load';
import { configSchema } from '../../src/core/config/schema';
import { embeddedDatabase, type Database } from '../../src/core/database';
import type { Deps } from '../../src/domain/deps';
import { verifyProof } from '../../src/domain/proofs';
import { journeyRecorderFor } from '../../src/flows/journey-recorder';
import { mountFunnel } from '../../src/http/funnel';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { testApp, testConfig, testDeps } from '../support/app';
import { eventually } from '../support/eventually';
import { SoftAuthenticator } from '../support/soft-authenticator';

/*
 * A login by passkey through the HTTP service on the sandbox upstreams, as a path of the login
 * machine (docs/flows-design.md): its debug trace passes 101 then 90, the funnel counts its
 * person through the passkey journey of /flows (started, 90 reached, completed, once however
 * often they come back to 90), and its recording replays against the machine.
 */

const log = pino({ level: 'silent' });
const INTERNAL_KEY = 'internal-key-for-the-passkey-journey';
const ORIGIN = 'http://localhost:8080';
const MARIO = sandboxSeedUsers[0]!;
const MARIO_PHONE = '+393331234567';
type Answer = { success: boolean; data: Record<string, unknown>; debug?: Array<{ step: string }> };

describe('a passkey journey through the service', () => {
  let sandbox: Sandbox;
  let db: Database;
  let deps: Deps;
  let node: ReturnType<ReturnType<typeof testApp>['callback']>;
  let now = Date.UTC(2026, 10, 28, 9, 0, 0);
  const auth = new SoftAuthenticator(ORIGIN);

  beforeAll(async () => {
    db = await embeddedDatabase();
    sandbox = await startSandbox(testConfig(), log);
    const config = configSchema.parse(
      deepMerge(sandbox.config as unknown as Record<string, unknown>, {
        sandbox: { enabled: false },
        // `debug` records every journey for replay (src/flows/journey-recorder.ts) and puts the trace in answers.
        debug: true,
        rate_limits: { enabled: false },
        security: { internal_key: INTERNAL_KEY },
        funnel: { flush_ms: 0 },
        passkeys: { enabled: true, rp_id: 'localhost', origins: [ORIGIN] },
      }),
    );
    deps = testDeps(config, { now: () => now, database: db });
    node = testApp(deps, { routes: (router) => mountFunnel(router, deps) }).callback();
  }, 120_000);
  afterAll(async () => {
    await deps.close();
    await sandbox.close();
    await db.close();
  });

  const fe = async (action: string, body: Record<string, unknown>) =>
    (await request(node).post(`/${action}`).send(body)).body as Answer;
  const stats = async (journey: string) => {
    const res = await request(node).get(`/flows/stats?since=1h&journey=${journey}`).set('x-internal-key', INTERNAL_KEY);
    return res.body.data.journeys[0] as {
      started: number;
      completed: number;
      edges: Array<{ from: string; to: string; people: number; repeats: number }>;
      screens: Array<Record<string, unknown> & { state: string }>;
    };
  };
  const passkeyLogin = async () => {
    const asked = await fe('PasskeyLoginOptions', {});
    const options = asked.data.options as { challenge: string };
    return fe('PasskeyLogin', { passkey_proof: asked.data.passkey_proof, credential: auth.assert(options) });
  };

  let loggedIn: Answer;
  let offered: Answer;
  let enrolled: Answer;

  beforeAll(async () => {
    // Mario logs in by SMS code and enrols a passkey: the journey before this one.
    await fe('FeLogin', { identifier: MARIO_PHONE });
    const code = await eventually(() => {
      const found = sandbox.outbox.list('sms').find((m) => m.to.includes(MARIO_PHONE))?.code;
      expect(found).toEqual(expect.any(String));
      return found!;
    });
    const verified = await fe('FeVerifyOtp', { flow: 'phone', phone: MARIO_PHONE, otp_code: code });
    expect(verified.data.next_step).toBe(90);
    offered = await fe('PasskeyEnrolOptions', { proof: verified.data.proof });
    enrolled = await fe('PasskeyEnrol', {
      proof: verified.data.proof,
      passkey_proof: offered.data.passkey_proof,
      credential: auth.register(offered.data.options as Parameters<SoftAuthenticator['register']>[0]),
    });
    expect(enrolled.success).toBe(true);
    now += 60_000;
    loggedIn = await passkeyLogin();
  }, 60_000);

  it('answers as PasskeyLogin always did, and passes 101 then 90 in its trace', () => {
    expect(loggedIn.data).toEqual({
      next_step: 90,
      flow: null,
      screen: 'success',
      done: true,
      uid: MARIO.uid,
      access_token: expect.any(String),
      proof: expect.any(String),
    });
    const steps = (loggedIn.debug ?? []).filter((e) => e.step.startsWith('step_')).map((e) => e.step);
    expect(steps).toEqual(['step_101', 'step_90']);
  });

  it('enrols as PasskeyEnrolOptions and PasskeyEnrol always answered, passing 102 then 103 in their traces', () => {
    expect(offered.data).toEqual({ options: expect.any(Object), passkey_proof: expect.any(String) });
    expect(enrolled.data).toEqual({
      passkey: {
        id: expect.any(String),
        name: 'Passkey',
        created_at: expect.any(String),
        last_used_at: null,
        device_type: 'singleDevice',
        backed_up: false,
      },
    });
    const steps = (answer: Answer) => (answer.debug ?? []).filter((e) => e.step.startsWith('step_')).map((e) => e.step);
    expect(steps(offered)).toEqual(['step_102']);
    expect(steps(enrolled)).toEqual(['step_103']);
  });

  it('counts the enrolment on its journey in /flows/funnel figures: the phone login, then 102 and 103', async () => {
    await eventually(async () => {
      const figures = await stats('passkey-enrol');
      expect(figures.started).toBe(1);
      expect(figures.edges).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ from: 'loggedIn', to: 'passkeyOffered', people: 1 }),
          expect.objectContaining({ from: 'passkeyOffered', to: 'passkeyEnrolled', people: 1 }),
        ]),
      );
      expect(figures.screens.find((s) => s.state === 'passkeyOffered')).toMatchObject({ arrived: 1 });
      expect(figures.screens.find((s) => s.state === 'passkeyEnrolled')).toMatchObject({ arrived: 1 });
    });
  });

  it('records the enrolment on the code login it follows, secrets masked, and the recording replays', async () => {
    const recorded = journeyRecorderFor(deps)!
      .list()
      .find((j) => j.requests.some((r) => r.action === 'PasskeyEnrol'));
    expect(recorded).toBeDefined();
    expect(recorded!.requests.map((r) => r.action)).toEqual([
      'FeLogin',
      'FeVerifyOtp',
      'PasskeyEnrolOptions',
      'PasskeyEnrol',
    ]);
    const [options, enrol] = recorded!.requests.slice(2);
    expect(options).toMatchObject({ resumed: 'loggedIn', steps: [102], states: ['offeringPasskey', 'passkeyOffered'] });
    expect(enrol).toMatchObject({
      resumed: 'passkeyOffered',
      steps: [103],
      states: ['enrollingPasskey', 'passkeyEnrolled'],
      body: { proof: '***', passkey_proof: '***', credential: '***' },
    });
    // The options name the person (the email the browser shows) and the passkey its credential: masked.
    expect(options!.effects).toEqual([
      expect.objectContaining({ name: 'passkeyEnrolOptions', output: { options: '***', passkey_proof: '***' } }),
    ]);
    expect(enrol!.effects).toEqual([expect.objectContaining({ name: 'enrolPasskey', output: { passkey: '***' } })]);
    const replayed = await replayRecording(recorded!);
    expect(replayed.divergence).toBeUndefined();
    expect(replayed.lines.map((l) => l.steps)).toEqual([[13, 14], [90], [102], [103]]);
  });

  it('shows the logins by method in the SMS ledger, JSON and page: one SMS sent for two logins, one SMS saved', async () => {
    const ledger = await request(node).get('/_sms/ledger?since=1h').set('x-internal-key', INTERNAL_KEY);
    expect(ledger.body.data.logins).toEqual({ code: 1, passkey: 1, sms_saved: 1 });
    const sent = (ledger.body.data.totals as Array<{ channel: string; sent: number }>)
      .filter((group) => group.channel === 'sms')
      .reduce((sum, group) => sum + group.sent, 0);
    expect(sent).toBe(1);
    const page = await request(node).get('/sms?since=1h').set('x-internal-key', INTERNAL_KEY);
    expect(page.text).toContain('1 con un codice, 1 con una passkey; SMS risparmiati: 1.');
  });

  it('hands out the proof of 90 with its own journey for the funnel: from the login screen straight to 90', () => {
    const claims = verifyProof(deps.proofKey, loggedIn.data.proof, now) as Record<string, unknown>;
    expect(claims).toMatchObject({ kind: 'verified', uid: MARIO.uid, step: 90, method: 'passkey' });
    expect(claims.trail).toBe('enteringIdentifier.90');
    expect(claims.journey).toEqual(expect.any(String));
    expect(claims).not.toHaveProperty('linked');
  });

  it('counts the person through the passkey journey in /flows/funnel figures, once, however often they come back to 90', async () => {
    // Back to 90 twice (the profile saved twice): the same person, not a new arrival.
    let proof = loggedIn.data.proof;
    for (const city of ['Roma', 'Milano']) {
      now += 5_000;
      const saved = await fe('FeUpdateProfile', { uid: MARIO.uid, city, proof });
      expect(saved.data).toMatchObject({ next_step: 90, done: true });
      proof = saved.data.proof;
    }
    await eventually(async () => {
      const figures = await stats('passkey-login');
      expect({ started: figures.started, completed: figures.completed }).toEqual({ started: 1, completed: 1 });
      expect(figures.edges).toEqual([
        expect.objectContaining({ from: 'enteringIdentifier', to: 'loggedIn', people: 1, repeats: 0 }),
      ]);
      expect(figures.screens.find((s) => s.state === 'loggedIn')).toMatchObject({ arrived: 1 });
    });
    // The code login before it is the phone login's person, not the passkey's.
    const phone = await stats('phone-login');
    expect({ started: phone.started, completed: phone.completed }).toEqual({ started: 1, completed: 1 });
    // The page of /flows/funnel shows the passkey journey with its person.
    const page = await request(node).get('/flows/funnel?since=1h').set('x-internal-key', INTERNAL_KEY);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Accesso con la passkey');
  });

  it('counts a passkey nobody knows as a refusal on the login screen, and no one started', async () => {
    const stranger = new SoftAuthenticator(ORIGIN);
    stranger.register({
      challenge: 'AAAA',
      rp: { id: 'localhost', name: 'x' },
      user: { id: 'dXNlcg', name: 'u', displayName: 'u' },
    } as Parameters<SoftAuthenticator['register']>[0]);
    const asked = await fe('PasskeyLoginOptions', {});
    const refused = await fe('PasskeyLogin', {
      passkey_proof: asked.data.passkey_proof,
      credential: stranger.assert(asked.data.options as { challenge: string }),
    });
    expect(refused.data.reason).toBe('passkey_unknown');
    await eventually(async () => {
      const figures = await stats('passkey-login');
      const door = figures.screens.find((s) => s.state === 'enteringIdentifier') as {
        refusals?: Array<{ reason: string; people: number }>;
      };
      expect(door.refusals).toEqual(expect.arrayContaining([expect.objectContaining({ reason: 'passkey_unknown' })]));
      expect(figures.started).toBe(1);
    });
  });

  it('records the passkey journey, secrets masked, and the recording replays against the machine', async () => {
    const recorded = journeyRecorderFor(deps)!
      .list()
      .find((j) => j.requests[0]?.action === 'PasskeyLogin' && j.requests[0].answer.success);
    expect(recorded).toBeDefined();
    const first = recorded!.requests[0]!;
    expect(first).toMatchObject({
      resumed: 'enteringIdentifier',
      steps: [101, 90],
      states: ['verifyingPasskey', 'issuingToken', 'ingestingLogin', 'loggedIn'],
      body: { passkey_proof: '***', credential: '***' },
    });
    expect(first.effects.map((e) => e.name)).toEqual(['verifyPasskey', 'issueToken', 'ingestLogin']);
    expect(recorded!.requests.map((r) => r.action)).toEqual(['PasskeyLogin', 'FeUpdateProfile', 'FeUpdateProfile']);
    const replayed = await replayRecording(recorded!);
    expect(replayed.divergence).toBeUndefined();
    expect(replayed.lines.map((l) => l.steps)).toEqual([
      [101, 90],
      [42, 90],
      [42, 90],
    ]);
  });
});
