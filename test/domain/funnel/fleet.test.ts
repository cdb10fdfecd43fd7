import pino from 'pino';
import request from 'supertest';
import { deepMerge } from '../../../src/core/config/load';
import { configSchema } from '../../../src/core/config/schema';
import { redisReady } from '../../../src/core/redis';
import type { Deps } from '../../../src/domain/deps';
import { mountFunnel } from '../../../src/http/funnel';
import { mountDemo } from '../../../src/http/demo';
import { renderFunnel } from '../../../scripts/funnel';
import { startSandbox, type Sandbox } from '../../../src/sandbox';
import { sandboxSeedUsers } from '../../../src/sandbox/identity';
import { eventually } from '../../support/eventually';
import { testApp, testConfig, testDeps } from '../../support/app';
import { startRedisServer, type RedisServer } from '../../support/redis-server';

/*
 * The funnel end to end: 210 sandbox journeys with known outcomes, driven through the Fe*
 * actions on two instances sharing one redis-server and one sandbox (each request goes to the
 * other instance than the one before), with resends and wrong codes, then every figure of the
 * phone registration and the phone login checked in people on GET /flows/stats, on
 * /flows/funnel, drawn on the diagrams of /flows and printed by `npm run funnel`: the refusals
 * where they were met (people and requests), the time on each screen the clock was moved by,
 * in progress while they may go on, stopped once idle longer than the screen allows (the
 * code's lifetime on 14, long expired when read), and the same
 * figures after an instance restarts. The instances share a fake clock, moved between phases.
 */

const log = pino({ level: 'silent' });
const INTERNAL_KEY = 'internal-key-for-the-funnel-test';
const READ_KEY = 'read-only-funnel-key';
const MARIO_PHONE = '+393331234567';
const GIULIA = sandboxSeedUsers[1]!;

const phone = (group: number, i: number) => `+3933380${group}${String(i).padStart(4, '0')}`;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('the journey funnel across two instances on Redis', () => {
  let sandbox: Sandbox;
  let redis: RedisServer;
  let now = Date.UTC(2025, 4, 10, 9, 0, 0);
  let fleet: Deps[];
  let nodes: Array<ReturnType<ReturnType<typeof testApp>['callback']>>;
  let turn = 0;
  let config: ReturnType<typeof testConfig>;

  const start = (): Deps => testDeps(config, { now: () => now });
  const app = (deps: Deps) =>
    testApp(deps, { routes: (router) => (mountFunnel(router, deps), mountDemo(router, deps)) }).callback();
  const fe = async (action: string, body: Record<string, unknown>) => {
    const res = await request(nodes[turn++ % 2]!)
      .post(`/${action}`)
      .send(body);
    return res.body as { success: boolean; data: Record<string, unknown> };
  };
  const tick = (seconds: number) => {
    now += seconds * 1000;
  };
  const codeFor = (to: string) =>
    eventually(() => {
      const found = sandbox.outbox.list().find((m) => m.to.toLowerCase() === to.toLowerCase() && m.code);
      if (!found?.code) throw new Error(`no code for ${to}`);
      return found.code;
    });
  const expectStep = (answer: { success: boolean; data: Record<string, unknown> }, step: number | string) =>
    expect({ step: answer.data.next_step, reason: answer.data.reason }).toEqual({ step, reason: undefined });

  beforeAll(async () => {
    redis = await startRedisServer();
    sandbox = await startSandbox(testConfig(), log);
    config = configSchema.parse(
      deepMerge(sandbox.config as unknown as Record<string, unknown>, {
        sandbox: { enabled: false },
        // A resend cooldown of 1 s: the recipients' cooldowns live in Redis on its own clock, so the resends below wait for real.
        otp: { store: 'redis', resend_cooldown_seconds: 1 },
        redis: { url: redis.url, key_prefix: 'funnel-test:' },
        rate_limits: { enabled: false },
        security: { internal_key: INTERNAL_KEY },
        // Long enough for the form screens to keep their people in progress while the clock moves through the phases (15 minutes); the code screens' is the code's.
        funnel: { read_key: READ_KEY, flush_ms: 20, idle_seconds: 3000 },
        // As in production: the demo off, /flows and its figures there for funnel readers only.
        demo: { enabled: false },
      }),
    );
    fleet = [start(), start()];
    await Promise.all(fleet.map((deps) => redisReady(deps.redis!)));
    nodes = fleet.map(app);
    await drive();
    await Promise.all(fleet.map((deps) => deps.funnel.flush()));
  }, 180_000);
  afterAll(async () => {
    await Promise.all(fleet.map((deps) => deps.close()));
    await sandbox.close();
    await redis.stop();
  });

  /*
   * The journeys, phase by phase (every journey of a phase, then the clock moves):
   *   A 40 phones stop at 14; B 30 type a wrong code at 14 and stop; C 40 register by phone to 90;
   *   D 20 stop at 24 (the registration email); E 20 stop at the form (25); F the 40 phones of C log
   *   in (14, 90); G Giulia, 10 times, tries to add Mario's phone: phone_taken at 61; H 10 new
   *   phones ask for their code twice, type a wrong one, then the right one, and stop at 24 (a
   *   login that became a registration): 10 people, not 20 or 30.
   */
  async function drive(): Promise<void> {
    const newPhones = [
      ...range(40).map((i) => phone(1, i)),
      ...range(30).map((i) => phone(2, i)),
      ...range(40).map((i) => phone(3, i)),
      ...range(20).map((i) => phone(4, i)),
      ...range(20).map((i) => phone(5, i)),
    ];
    for (const p of newPhones) expectStep(await fe('FeLogin', { identifier: p }), 14);
    tick(4);
    for (const i of range(30)) {
      const p = phone(2, i);
      const code = await codeFor(p);
      expect(
        (await fe('FeVerifyOtp', { flow: 'phone', phone: p, otp_code: code === '000000' ? '000001' : '000000' })).data
          .reason,
      ).toBe('invalid');
    }
    const registering = [
      ...range(40).map((i) => phone(3, i)),
      ...range(20).map((i) => phone(4, i)),
      ...range(20).map((i) => phone(5, i)),
    ];
    const proofs = new Map<string, Record<string, unknown>>();
    for (const p of registering) {
      const answer = await fe('FeVerifyOtp', { flow: 'phone', phone: p, otp_code: await codeFor(p) });
      expectStep(answer, 24);
      proofs.set(p, answer.data);
    }
    tick(7);
    const emailOf = (p: string) => `reg${p.slice(1)}@example.com`;
    const goingOn = registering.filter((p) => !p.startsWith(phone(4, 0).slice(0, 9)));
    for (const p of goingOn) {
      const answer = await fe('FeRegister', {
        phase: 'email_otp',
        email: emailOf(p),
        phone: p,
        otp: true,
        phone_proof: proofs.get(p)!.phone_proof,
      });
      expectStep(answer, 23);
      proofs.set(p, answer.data);
    }
    tick(25);
    for (const p of goingOn) {
      const answer = await fe('FeVerifyOtp', {
        flow: 'phone_register',
        email: emailOf(p),
        phone: p,
        otp_code: await codeFor(emailOf(p)),
        pending_proof: proofs.get(p)!.pending_proof,
      });
      expectStep(answer, 25);
      proofs.set(p, answer.data);
    }
    tick(100);
    for (const i of range(40)) {
      const p = phone(3, i);
      const body = {
        phase: 'register',
        email: emailOf(p),
        phone: p,
        first_name: 'Prova',
        last_name: 'Imbuto',
        consents: { terms_conditions: true },
        register_proof: proofs.get(p)!.register_proof,
      };
      expectStep(await fe('FeRegister', body), 90);
    }
    tick(61);
    for (const i of range(40)) expectStep(await fe('FeLogin', { identifier: phone(3, i) }), 14);
    for (const i of range(40)) {
      const p = phone(3, i);
      const codes = sandbox.outbox.list().filter((m) => m.to === p && m.code);
      expectStep(await fe('FeVerifyOtp', { flow: 'phone', phone: p, otp_code: codes[0]!.code }), 90);
    }
    for (const attempt of range(10)) {
      tick(61);
      expectStep(await fe('FeLogin', { identifier: GIULIA.email }), 33);
      const found = await eventually(() => {
        const mails = sandbox.outbox.list().filter((m) => m.to === GIULIA.email && m.code);
        expect(mails.length).toBe(attempt + 1);
        return mails[0]!.code!;
      });
      const verified = await fe('FeVerifyOtp', { flow: 'email', email: GIULIA.email, otp_code: found });
      expectStep(verified, 61);
      tick(12);
      const taken = await fe('FeAddPhone', {
        flow: 'email_add_phone',
        phone: MARIO_PHONE,
        uid: verified.data.uid,
        email: GIULIA.email,
        proof: verified.data.proof,
      });
      expect(taken.data.reason).toBe('phone_taken');
    }
    const resending = range(10).map((i) => phone(6, i));
    for (const p of resending) expectStep(await fe('FeLogin', { identifier: p }), 14);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    tick(2);
    for (const p of resending)
      expect((await fe('FeLogin', { identifier: p })).data.otp).toMatchObject({ resent: true });
    for (const p of resending) {
      const codes = await eventually(() => {
        const found = sandbox.outbox.list().filter((m) => m.to === p && m.code);
        expect(found).toHaveLength(2);
        return found.map((m) => m.code!);
      });
      // The outbox lists the newest first: the resent code is the one that counts.
      const latest = codes[0]!;
      const wrong = ['000000', '000001', '000002'].find((c) => !codes.includes(c))!;
      expect((await fe('FeVerifyOtp', { flow: 'phone', phone: p, otp_code: wrong })).data.reason).toBe('invalid');
      const verified = await fe('FeVerifyOtp', { flow: 'phone', phone: p, otp_code: latest });
      expectStep(verified, 24);
    }
  }

  const stats = (node: number, query: string, headers: Record<string, string> = { 'x-funnel-key': READ_KEY }) =>
    request(nodes[node]!).get(`/flows/stats?${query}`).set(headers);
  const screen = (
    body: { data: { journeys: Array<{ id: string; screens: Array<Record<string, unknown>> }> } },
    journey: string,
    state: string,
  ) => body.data.journeys.find((j) => j.id === journey)!.screens.find((s) => s.state === state)!;

  /** The phone registration's figures about 15 minutes in: who left the code screen has stopped (their code expired), who left a form is in progress. */
  const PHONE_REGISTRATION = {
    enteringIdentifier: { arrived: 210, continued: 200, elsewhere: 10, stopped: 0, inProgress: 0 },
    // Timed from the accepted code's issue: the 80 registering accepted theirs 4 s after it, the 40 logging in and the 10 resending at once.
    awaitingPhoneCode: {
      arrived: 200,
      continued: 90,
      elsewhere: 40,
      stopped: 70,
      inProgress: 0,
      repeats: 10,
      timed: 130,
      median_seconds: 5,
      p90_seconds: 5,
      refusals: [{ reason: 'invalid', mistake: 'codice sbagliato', count: 40, people: 40 }],
    },
    askingRegistrationEmail: {
      arrived: 90,
      continued: 60,
      elsewhere: 0,
      stopped: 0,
      inProgress: 30,
      timed: 60,
      median_seconds: 10,
      p90_seconds: 10,
    },
    awaitingRegistrationEmailCode: {
      arrived: 60,
      continued: 60,
      elsewhere: 0,
      stopped: 0,
      inProgress: 0,
      timed: 60,
      median_seconds: 30,
      p90_seconds: 30,
    },
    fillingPhoneRegistrationForm: {
      arrived: 60,
      continued: 40,
      elsewhere: 0,
      stopped: 0,
      inProgress: 20,
      timed: 40,
      median_seconds: 120,
      p90_seconds: 120,
    },
    loggedIn: { arrived: 40, completed: 40, dropOff: null, last: true },
  };
  /** The same once their hour has passed: in progress has become stopped, nothing else moved. */
  const closed = (figures: typeof PHONE_REGISTRATION) =>
    Object.fromEntries(
      Object.entries(figures).map(([state, f]) => [
        state,
        'inProgress' in f ? { ...f, stopped: f.stopped + f.inProgress, inProgress: 0 } : f,
      ]),
    ) as typeof PHONE_REGISTRATION;

  /*
   * The figures /flows draws for a funnel reader: on the journey's SVG (asked with the range the
   * page links), the people on each arrow in the diagram's order and each screen's box; and the
   * table under the diagram.
   */
  async function drawn(node: number, journey: string, since: string) {
    const page = await request(nodes[node]!).get(`/flows?since=${since}`).set('x-funnel-key', READ_KEY);
    expect(page.status).toBe(200);
    const section = page.text.slice(
      page.text.indexOf(`<section class="journey" id="${journey}"`),
      page.text.indexOf('</section>', page.text.indexOf(`id="${journey}"`)),
    );
    const src = /<img src="([^"]+)"/.exec(section)![1]!.replace(/&amp;/g, '&');
    const svg = (await request(nodes[node]!).get(src).set('x-funnel-key', READ_KEY)).body.toString('utf8') as string;
    const edges = [
      ...svg.matchAll(/<g class="funnel-edge"[^>]*>.*?<text class="people"[^>]*>(\d+) person[ae]<\/text>/g),
    ].map((m) => Number(m[1]));
    const line = (state: string, figure: string) => {
      const box = svg.slice(
        svg.indexOf(`<g class="funnel-screen" data-state="${state}">`),
        svg.indexOf('</g>', svg.indexOf(`data-state="${state}"`)),
      );
      return new RegExp(`data-figure="${figure}"[^>]*>([^<]*)<`).exec(box)?.[1]?.replace(/&gt;/g, '>');
    };
    const cell = (state: string, figure: string) => {
      const row = section.slice(
        section.indexOf(`<tr data-state="${state}">`, section.indexOf('class="funnel-figures"')),
      );
      return new RegExp(`data-figure="${figure}">([^<]*)<`)
        .exec(row.slice(0, row.indexOf('</tr>')))?.[1]
        ?.trim()
        .split(' ')[0];
    };
    return { edges, line, cell };
  }

  const pct = (v: number) =>
    `${(Math.round(v * 10) / 10).toLocaleString('it-IT', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} %`;
  const expectDrawn = async (node: number, since: string, figuresOf: typeof PHONE_REGISTRATION) => {
    const { edges, line, cell } = await drawn(node, 'phone-registration', since);
    expect(edges).toEqual([200, 90, 60, 60, 40]);
    for (const [state, figures] of Object.entries(figuresOf)) {
      const first = state === 'enteringIdentifier';
      expect({ state, arrived: line(state, 'arrived'), cell: cell(state, 'arrived') }).toEqual({
        state,
        arrived: `arrivati ${figures.arrived}${first ? ' (tutti i percorsi)' : ''}`,
        cell: String(figures.arrived),
      });
      if ('last' in figures) {
        // The end shows who completed, never a drop-off.
        expect({ state, completed: line(state, 'completed'), stopped: line(state, 'stopped') }).toEqual({
          state,
          completed: `completano 40 (${pct((40 / 200) * 100)} dei partiti)`,
          stopped: undefined,
        });
        expect(cell(state, 'stopped')).toBe('–');
        // From the first code asked to the form sent: 4 + 7 + 25 + 100 s.
        expect(line(state, 'complete-time')).toBe('per completare: mediana ≤ 3 min, p90 ≤ 3 min');
        continue;
      }
      expect({
        state,
        continued: line(state, 'continued'),
        elsewhere: line(state, 'elsewhere'),
        stopped: line(state, 'stopped'),
      }).toEqual({
        state,
        continued: `proseguono ${figures.continued} (${pct((figures.continued / figures.arrived) * 100)})`,
        elsewhere: `altrove ${figures.elsewhere}`,
        stopped: `in corso ${figures.inProgress} · si fermano ${figures.stopped} (${pct((figures.stopped / figures.arrived) * 100)})`,
      });
      expect({ state, stopped: cell(state, 'stopped'), inProgress: cell(state, 'in-progress') }).toEqual({
        state,
        stopped: String(figures.stopped),
        inProgress: String(figures.inProgress),
      });
    }
    expect(line('fillingPhoneRegistrationForm', 'time')).toBe('tempo: mediana ≤ 2 min, p90 ≤ 2 min');
    // 1 in 5 of those who reached the code typed a wrong one; 210 codes for 200 people.
    expect(line('awaitingPhoneCode', 'refusal')).toBe('codice sbagliato: 40 persone (20,0 %), 40 volte');
    expect(line('awaitingPhoneCode', 'repeats')).toBe('10 richieste in più (10 persone)');
    expect(line('awaitingPhoneCode', 'time')).toBe('tempo: mediana ≤ 5 s, p90 ≤ 5 s');
    // The shared code screen says where its people went: 40 to the login's end.
    expect(line('awaitingPhoneCode', 'split')).toBe('  → 90 · Accesso effettuato: 40');
  };

  it('refuses the statistics without a key, and answers the read-only key and the internal key', async () => {
    expect((await stats(0, 'since=1h', {})).status).toBe(401);
    expect((await stats(0, 'since=1h', { 'x-funnel-key': 'wrong' })).status).toBe(401);
    expect((await stats(0, 'since=1h', { 'x-internal-key': INTERNAL_KEY })).status).toBe(200);
    expect((await request(nodes[1]!).get('/flows/funnel?since=1h')).status).toBe(401);
  });

  it('counts every screen of the phone registration in people, on both instances', async () => {
    for (const node of [0, 1]) {
      const res = await stats(node, 'since=1h&journey=phone-registration');
      expect(res.status).toBe(200);
      expect(res.body.data.journeys.map((j: { id: string }) => j.id)).toEqual(['phone-registration']);
      for (const [state, figures] of Object.entries(PHONE_REGISTRATION))
        expect({ state, ...screen(res.body, 'phone-registration', state) }).toMatchObject({ state, ...figures });
      expect(res.body.data.journeys[0]).toMatchObject({
        started: 200,
        completed: 40,
        completionRate: 40 / 200,
        median_complete_seconds: 180,
        p90_complete_seconds: 180,
      });
      expect(res.body.data.journeys[0].edges.map((e: { people: number }) => e.people)).toEqual([200, 90, 60, 60, 40]);
      // Where the 200 on the code screen went: 90 this way, 40 to the login's end, 70 not yet anywhere.
      expect(screen(res.body, 'phone-registration', 'awaitingPhoneCode').split).toEqual([
        { to: 'askingRegistrationEmail', title: expect.stringMatching(/^24 · /), people: 90, own: true },
        { to: 'loggedIn', title: '90 · Accesso effettuato', people: 40, own: false },
        { to: null, title: 'ancora qui o fermi', people: 70, own: false },
      ]);
    }
  });

  it('counts the phone login and the taken phone on their own journeys', async () => {
    const res = await stats(1, 'since=1h');
    expect(screen(res.body, 'phone-login', 'awaitingPhoneCode')).toMatchObject({
      arrived: 200,
      continued: 40,
      elsewhere: 90,
      inProgress: 0,
      stopped: 70,
      conversion: 40 / 200,
    });
    expect(screen(res.body, 'phone-login', 'loggedIn')).toMatchObject({
      arrived: 40,
      completed: 40,
      stopped: 0,
      dropOff: null,
      last: true,
    });
    expect(screen(res.body, 'email-login-add-phone', 'askingPhone')).toMatchObject({
      arrived: 10,
      continued: 0,
      inProgress: 10,
      refusals: [{ reason: 'phone_taken', mistake: 'il telefono è di un altro account', count: 10, people: 10 }],
    });
    expect(screen(res.body, 'email-login-add-phone', 'awaitingEmailCode')).toMatchObject({
      arrived: 10,
      continued: 10,
      stopped: 0,
      timed: 10,
      median_seconds: 1,
      p90_seconds: 1,
    });
    // Every screen of every journey: arrived = went on + elsewhere + stopped + in progress (+ completed at the end).
    for (const journey of res.body.data.journeys as Array<{ id: string; screens: Array<Record<string, number>> }>) {
      for (const s of journey.screens)
        expect({
          journey: journey.id,
          state: s.state,
          sum: s.continued! + s.elsewhere! + s.stopped! + s.inProgress! + s.completed!,
        }).toEqual({ journey: journey.id, state: s.state, sum: s.arrived });
    }
  });

  it('counts the same people in Prometheus, summed over the instances', async () => {
    const reached = new Map<string, number>();
    for (const deps of fleet) {
      const metric = await deps.metrics.registry.getSingleMetric('lfa_funnel_steps_reached_total')!.get();
      for (const { labels, value } of metric.values)
        reached.set(`${labels.journey} ${labels.step}`, (reached.get(`${labels.journey} ${labels.step}`) ?? 0) + value);
    }
    // Each instance counts the people its own requests brought first: together, each person once.
    expect(
      ['enteringIdentifier', '14', '24', '23', '25', '90'].map((step) => reached.get(`phone-registration ${step}`)),
    ).toEqual([210, 200, 90, 60, 60, 40]);
    expect(reached.get('phone-login 90')).toBe(40);
    expect(reached.get('email-login-add-phone 61')).toBe(10);
  });

  it('shows the same figures on the page, in Italian', async () => {
    const page = await request(nodes[0]!).get('/flows/funnel?since=1h').set('x-funnel-key', READ_KEY);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const section = page.text.slice(page.text.indexOf('<section class="journey" id="phone-registration"'));
    const row = (state: string) =>
      section.slice(
        section.indexOf(`<tr data-state="${state}">`),
        section.indexOf('</tr>', section.indexOf(`<tr data-state="${state}">`)),
      );
    const figure = (state: string, name: string) =>
      new RegExp(`data-figure="${name}">([^<]*)`).exec(row(state))?.[1]?.trim();
    for (const [state, figures] of Object.entries(PHONE_REGISTRATION)) {
      expect({ state, arrived: figure(state, 'arrived')?.split(' ')[0] }).toEqual({
        state,
        arrived: String(figures.arrived),
      });
      if (!('last' in figures))
        expect({ state, stopped: figure(state, 'stopped'), inProgress: figure(state, 'in-progress') }).toEqual({
          state,
          stopped: String(figures.stopped),
          inProgress: String(figures.inProgress),
        });
    }
    expect(figure('awaitingPhoneCode', 'continued')).toBe('90');
    expect(row('awaitingPhoneCode')).toContain('45,0 %');
    // Every figure spelled as on the diagrams and in the terminal: refusals in product's words, repeats with the people who sent them.
    expect(row('awaitingPhoneCode')).toContain('codice sbagliato: 40 persone (20,0 %), 40 volte');
    expect(row('awaitingPhoneCode')).not.toContain('invalid');
    expect(figure('awaitingPhoneCode', 'repeats')).toBe('10 richieste in più (10 persone)');
    expect(figure('loggedIn', 'stopped')).toBe('–');
    expect(figure('loggedIn', 'completed')).toBe('40');
    expect(figure('fillingPhoneRegistrationForm', 'median')).toBe('≤ 2 min');
    expect(section).toContain('<strong class="people">200</strong> persone');
    expect(section).toContain(
      'Partiti <strong data-figure="started">200</strong>, arrivati alla fine <strong data-figure="completed">40</strong>',
    );
  });

  it('draws the same figures on the diagrams of /flows, on both instances', async () => {
    await expectDrawn(0, '1h', PHONE_REGISTRATION);
    await expectDrawn(1, '1h', PHONE_REGISTRATION);
    const { edges, line } = await drawn(1, 'email-login-add-phone', '1h');
    expect(edges.length).toBeGreaterThan(0);
    expect(line('askingPhone', 'refusal')).toBe('il telefono è di un altro account: 10 persone (100,0 %), 10 volte');
    // Without a key, and without the demo, there is no /flows at all.
    const open = await request(nodes[0]!).get('/flows?since=1h');
    expect([open.status, open.body.data?.reason]).toEqual([404, 'unknown_action']);
  });

  it('prints the same figures in the terminal (npm run funnel)', async () => {
    const text = renderFunnel((await stats(1, 'since=1h&journey=phone-registration')).body.data);
    expect(text).toMatch(/partiti 200, arrivati alla fine 40 \(20,0 %\)/);
    expect(text).toMatch(/tempo per finire mediana ≤ 3 min p90 ≤ 3 min/);
    expect(text).toMatch(
      /14 · Inserisci il codice SMS\s+200\s+90 45,0 %\s+40\s+0\s+70 35,0 %\s+–\s+10 richieste in più \(10 persone\)\s+≤ 5 s\s+≤ 5 s\s+codice sbagliato: 40 persone \(20,0 %\), 40 volte/,
    );
    expect(text).toMatch(
      /25 · Completa la registrazione\s+60\s+40 66,7 %\s+0\s+20\s+0 0,0 %\s+–\s+0\s+≤ 2 min\s+≤ 2 min/,
    );
    // In English the screens are named as the machine names them: no line mixes two languages.
    const english = renderFunnel((await stats(1, 'since=1h&journey=phone-registration')).body.data, 'en');
    // In English the screens and journeys have English titles, never the machine's state names.
    expect(english).toMatch(
      /Sign up with a phone: started 200, completed 40 \(20\.0 %\), time to complete median ≤ 3 min/,
    );
    expect(english).toMatch(
      /14 · Enter the SMS code\s+200\s+90 45\.0 %.*10 more requests \(10 people\)\s+≤ 5 s\s+≤ 5 s\s+wrong code: 40 people \(20\.0 %\), 40 times/,
    );
    expect(english).not.toMatch(/Inserisci|Accesso|persone|partiti|awaitingPhoneCode|enteringIdentifier|invalid/);
    expect(text).not.toMatch(/\b(started|completed|screen|arrived)\b/);
    expect(text).toMatch(/90 · Accesso effettuato\s+40\s+–\s+–\s+–\s+–\s+40\s/);
  });

  it('compares two ranges that do not overlap and highlights the screens whose conversion moved', async () => {
    const res = await stats(0, 'since=1h&compare=previous&journey=phone-registration');
    expect(res.status).toBe(200);
    const { from, to, compared } = res.body.data as {
      from: string;
      to: string;
      compared: { from: string; to: string; journeys: Array<{ screens: Array<{ arrived: number }> }> };
    };
    expect(Date.parse(to) - Date.parse(from)).toBe(3_600_000);
    expect(compared.to).toBe(from);
    expect(Date.parse(compared.to) - Date.parse(compared.from)).toBe(3_600_000);
    expect(compared.journeys[0]!.screens[1]!.arrived).toBe(0);
    expect(res.body.data.shifts[0]).toMatchObject({ journey: 'phone-registration', before: null });
  });

  it('keeps the statistics when an instance restarts, and once the hour has passed counts who went nowhere as stopped', async () => {
    await fleet[0]!.close();
    fleet[0] = start();
    await redisReady(fleet[0].redis!);
    nodes[0] = app(fleet[0]);
    const res = await stats(0, 'since=1h&journey=phone-registration');
    for (const [state, figures] of Object.entries(PHONE_REGISTRATION))
      expect({ state, ...screen(res.body, 'phone-registration', state) }).toMatchObject({ state, ...figures });
    await expectDrawn(0, '1h', PHONE_REGISTRATION);

    tick(3600);
    const later = await stats(1, 'since=2h&journey=phone-registration');
    for (const [state, figures] of Object.entries(closed(PHONE_REGISTRATION)))
      expect({ state, ...screen(later.body, 'phone-registration', state) }).toMatchObject({ state, ...figures });
    await expectDrawn(1, '2h', closed(PHONE_REGISTRATION));
  });
});
