import pino from 'pino';
import request from 'supertest';
import { deepMerge } from '../../src/core/config/load';
import { configSchema } from '../../src/core/config/schema';
import { redisReady } from '../../src/core/redis';
import type { Deps } from '../../src/domain/deps';
import { mountFunnel } from '../../src/http/funnel';
import { mountDemo } from '../../src/http/demo';
import { renderFunnel } from '../../scripts/funnel';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { eventually } from '../support/eventually';
import { testApp, testConfig, testDeps } from '../support/app';
import { startRedisServer, type RedisServer } from '../support/redis-server';

/*
 * The funnel end to end: 200 sandbox journeys with known outcomes, driven through the Fe*
 * actions on two instances sharing one redis-server and one sandbox (each request goes to the
 * other instance than the one before), then every figure of the phone registration and the
 * phone login checked on GET /flows/stats, on /flows/funnel and drawn on the diagrams of /flows, the refusals where they were
 * met, the time on each screen the clock was moved by, and the same figures after an instance
 * restarts. The instances share a fake clock, moved between the phases of the journeys.
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
  const app = (deps: Deps) => testApp(deps, { routes: (router) => (mountFunnel(router, deps), mountDemo(router, deps)) }).callback();
  const fe = async (action: string, body: Record<string, unknown>) => {
    const res = await request(nodes[turn++ % 2]!).post(`/${action}`).send(body);
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
  const expectStep = (answer: { success: boolean; data: Record<string, unknown> }, step: number | string) => expect({ step: answer.data.next_step, reason: answer.data.reason }).toEqual({ step, reason: undefined });

  beforeAll(async () => {
    redis = await startRedisServer();
    sandbox = await startSandbox(testConfig(), log);
    config = configSchema.parse(
      deepMerge(sandbox.config as unknown as Record<string, unknown>, {
        sandbox: { enabled: false },
        otp: { store: 'redis' },
        redis: { url: redis.url, key_prefix: 'funnel-test:' },
        rate_limits: { enabled: false },
        security: { internal_key: INTERNAL_KEY },
        funnel: { read_key: READ_KEY, flush_ms: 20 },
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
   *   in (14, 90); G Giulia, 10 times, tries to add Mario's phone: phone_taken at 61.
   */
  async function drive(): Promise<void> {
    const newPhones = [...range(40).map((i) => phone(1, i)), ...range(30).map((i) => phone(2, i)), ...range(40).map((i) => phone(3, i)), ...range(20).map((i) => phone(4, i)), ...range(20).map((i) => phone(5, i))];
    for (const p of newPhones) expectStep(await fe('FeLogin', { identifier: p }), 14);
    tick(4);
    for (const i of range(30)) {
      const p = phone(2, i);
      const code = await codeFor(p);
      expect((await fe('FeVerifyOtp', { flow: 'phone', phone: p, otp_code: code === '000000' ? '000001' : '000000' })).data.reason).toBe('invalid');
    }
    const registering = [...range(40).map((i) => phone(3, i)), ...range(20).map((i) => phone(4, i)), ...range(20).map((i) => phone(5, i))];
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
      const answer = await fe('FeRegister', { phase: 'email_otp', email: emailOf(p), phone: p, otp: true, phone_proof: proofs.get(p)!.phone_proof });
      expectStep(answer, 23);
      proofs.set(p, answer.data);
    }
    tick(25);
    for (const p of goingOn) {
      const answer = await fe('FeVerifyOtp', { flow: 'phone_register', email: emailOf(p), phone: p, otp_code: await codeFor(emailOf(p)), pending_proof: proofs.get(p)!.pending_proof });
      expectStep(answer, 25);
      proofs.set(p, answer.data);
    }
    tick(100);
    for (const i of range(40)) {
      const p = phone(3, i);
      const body = { phase: 'register', email: emailOf(p), phone: p, first_name: 'Prova', last_name: 'Imbuto', consents: { terms_conditions: true }, register_proof: proofs.get(p)!.register_proof };
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
      const taken = await fe('FeAddPhone', { flow: 'email_add_phone', phone: MARIO_PHONE, uid: verified.data.uid, email: GIULIA.email, proof: verified.data.proof });
      expect(taken.data.reason).toBe('phone_taken');
    }
  }

  const stats = (node: number, query: string, headers: Record<string, string> = { 'x-funnel-key': READ_KEY }) => request(nodes[node]!).get(`/flows/stats?${query}`).set(headers);
  const screen = (body: { data: { journeys: Array<{ id: string; screens: Array<Record<string, unknown>> }> } }, journey: string, state: string) =>
    body.data.journeys.find((j) => j.id === journey)!.screens.find((s) => s.state === state)!;

  const PHONE_REGISTRATION = {
    enteringIdentifier: { arrived: 200, continued: 190, elsewhere: 10, stopped: 0 },
    // Timed from the code's issue: the 80 registering accepted theirs 4 s after it, the 40 logging in at once (30 wrong codes are not timed).
    awaitingPhoneCode: { arrived: 190, continued: 80, elsewhere: 40, stopped: 70, timed: 120, medianSeconds: 5, p90Seconds: 5, refusals: [{ reason: 'invalid', mistake: 'codice sbagliato', count: 30 }] },
    askingRegistrationEmail: { arrived: 80, continued: 60, elsewhere: 0, stopped: 20, timed: 60, medianSeconds: 10, p90Seconds: 10 },
    awaitingRegistrationEmailCode: { arrived: 60, continued: 60, elsewhere: 0, stopped: 0, timed: 60, medianSeconds: 30, p90Seconds: 30 },
    fillingPhoneRegistrationForm: { arrived: 60, continued: 40, elsewhere: 0, stopped: 20, timed: 40, medianSeconds: 120, p90Seconds: 120 },
    loggedIn: { arrived: 80, last: true },
  };

  /*
   * The figures /flows draws for a funnel reader: on the journey's SVG (asked with the range the
   * page links), the people on each arrow in the diagram's order and each screen's box; and the
   * table under the diagram.
   */
  async function drawn(node: number, journey: string) {
    const page = await request(nodes[node]!).get('/flows?since=1h').set('x-funnel-key', READ_KEY);
    expect(page.status).toBe(200);
    const section = page.text.slice(page.text.indexOf(`<section class="journey" id="${journey}"`), page.text.indexOf('</section>', page.text.indexOf(`id="${journey}"`)));
    const src = /<img src="([^"]+)"/.exec(section)![1]!.replace(/&amp;/g, '&');
    const svg = (await request(nodes[node]!).get(src).set('x-funnel-key', READ_KEY)).body.toString('utf8') as string;
    const edges = [...svg.matchAll(/<g class="funnel-edge"[^>]*>.*?<text class="people"[^>]*>(\d+) person[ae]<\/text>/g)].map((m) => Number(m[1]));
    const line = (state: string, figure: string) => {
      const box = svg.slice(svg.indexOf(`<g class="funnel-screen" data-state="${state}">`), svg.indexOf('</g>', svg.indexOf(`data-state="${state}"`)));
      return new RegExp(`data-figure="${figure}"[^>]*>([^<]*)<`).exec(box)?.[1];
    };
    const cell = (state: string, figure: string) => {
      const row = section.slice(section.indexOf(`<tr data-state="${state}">`, section.indexOf('class="funnel-figures"')));
      return new RegExp(`data-figure="${figure}">([^<]*)<`).exec(row.slice(0, row.indexOf('</tr>')))?.[1]?.trim().split(' ')[0];
    };
    return { edges, line, cell };
  }

  const expectDrawn = async (node: number) => {
    const { edges, line, cell } = await drawn(node, 'phone-registration');
    expect(edges).toEqual([190, 80, 60, 60, 40]);
    for (const [state, figures] of Object.entries(PHONE_REGISTRATION)) {
      const first = state === 'enteringIdentifier';
      expect({ state, arrived: line(state, 'arrived'), cell: cell(state, 'arrived') }).toEqual({ state, arrived: `${first ? 'partiti' : 'arrivati'} ${figures.arrived}`, cell: String(figures.arrived) });
      if ('last' in figures) continue;
      const conversion = (figures.continued / figures.arrived) * 100;
      const dropOff = (figures.stopped / figures.arrived) * 100;
      const pct = (v: number) => `${(Math.round(v * 10) / 10).toLocaleString('it-IT')} %`;
      expect({ state, continued: line(state, 'continued'), stopped: line(state, 'stopped') }).toEqual({
        state,
        continued: `proseguono ${figures.continued} (${pct(conversion)})`,
        stopped: `si fermano ${figures.stopped} (${pct(dropOff)}) · altrove ${figures.elsewhere}`,
      });
      expect({ state, stopped: cell(state, 'stopped') }).toEqual({ state, stopped: String(figures.stopped) });
    }
    expect(line('fillingPhoneRegistrationForm', 'time')).toBe('tempo: mediana ≤ 2 min, p90 ≤ 2 min');
    expect(line('awaitingPhoneCode', 'refusal')).toBe('codice sbagliato: 30');
    expect(line('awaitingPhoneCode', 'time')).toBe('tempo: mediana ≤ 5 s, p90 ≤ 5 s');
  };

  it('refuses the statistics without a key, and answers the read-only key and the internal key', async () => {
    expect((await stats(0, 'since=1h', {})).status).toBe(401);
    expect((await stats(0, 'since=1h', { 'x-funnel-key': 'wrong' })).status).toBe(401);
    expect((await stats(0, 'since=1h', { 'x-internal-key': INTERNAL_KEY })).status).toBe(200);
    expect((await request(nodes[1]!).get('/flows/funnel?since=1h')).status).toBe(401);
  });

  it('counts every screen of the phone registration as driven, on both instances', async () => {
    for (const node of [0, 1]) {
      const res = await stats(node, 'since=1h&journey=phone-registration');
      expect(res.status).toBe(200);
      expect(res.body.data.journeys.map((j: { id: string }) => j.id)).toEqual(['phone-registration']);
      for (const [state, figures] of Object.entries(PHONE_REGISTRATION)) expect({ state, ...screen(res.body, 'phone-registration', state) }).toMatchObject({ state, ...figures });
      expect(res.body.data.journeys[0].edges.map((e: { people: number }) => e.people)).toEqual([190, 80, 60, 60, 40]);
    }
  });

  it('counts the phone login and the taken phone on their own journeys', async () => {
    const res = await stats(1, 'since=1h');
    expect(screen(res.body, 'phone-login', 'awaitingPhoneCode')).toMatchObject({ arrived: 190, continued: 40, elsewhere: 80, stopped: 70, conversion: 40 / 190 });
    expect(screen(res.body, 'email-login-add-phone', 'askingPhone')).toMatchObject({
      arrived: 10,
      continued: 0,
      stopped: 10,
      timed: 10,
      medianSeconds: 15,
      refusals: [{ reason: 'phone_taken', mistake: 'il telefono è di un altro account', count: 10 }],
    });
    expect(screen(res.body, 'email-login-add-phone', 'awaitingEmailCode')).toMatchObject({ arrived: 10, continued: 10, stopped: 0, timed: 10, medianSeconds: 1, p90Seconds: 1 });
  });

  it('shows the same figures on the page, in Italian', async () => {
    const page = await request(nodes[0]!).get('/flows/funnel?since=1h').set('x-funnel-key', READ_KEY);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const section = page.text.slice(page.text.indexOf('<section class="journey" id="phone-registration"'));
    const row = (state: string) => section.slice(section.indexOf(`<tr data-state="${state}">`), section.indexOf('</tr>', section.indexOf(`<tr data-state="${state}">`)));
    const figure = (state: string, name: string) => new RegExp(`data-figure="${name}">([^<]*)`).exec(row(state))?.[1]?.trim();
    for (const [state, figures] of Object.entries(PHONE_REGISTRATION)) {
      expect({ state, arrived: figure(state, 'arrived')?.split(' ')[0] }).toEqual({ state, arrived: String(figures.arrived) });
      if (!('last' in figures)) expect({ state, stopped: figure(state, 'stopped') }).toEqual({ state, stopped: String(figures.stopped) });
    }
    expect(figure('awaitingPhoneCode', 'continued')).toBe('80');
    expect(row('awaitingPhoneCode')).toContain('42,1 %');
    expect(row('awaitingPhoneCode')).toContain('codice sbagliato (<code>invalid</code>): 30');
    expect(figure('fillingPhoneRegistrationForm', 'median')).toBe('≤ 2 min');
    expect(section).toContain('<strong class="people">190</strong> persone');
  });

  it('draws the same figures on the diagrams of /flows, on both instances', async () => {
    await expectDrawn(0);
    await expectDrawn(1);
    const { edges, line } = await drawn(1, 'email-login-add-phone');
    expect(edges.length).toBeGreaterThan(0);
    expect(line('askingPhone', 'refusal')).toBe('il telefono è di un altro account: 10');
    // Without a key, and without the demo, there is no /flows at all.
    const open = await request(nodes[0]!).get('/flows?since=1h');
    expect([open.status, open.body.data?.reason]).toEqual([404, 'unknown_action']);
  });

  it('prints the same figures in the terminal (npm run funnel)', async () => {
    const text = renderFunnel((await stats(1, 'since=1h&journey=phone-registration')).body.data);
    expect(text).toMatch(/14 · Inserisci il codice SMS\s+190\s+80 42\.1%\s+40\s+70 36\.8%\s+≤5s\s+≤5s\s+invalid 30/);
    expect(text).toMatch(/25 · Completa la registrazione\s+60\s+40 66\.7%\s+0\s+20 33\.3%\s+≤120s\s+≤120s/);
  });

  it('compares two ranges and highlights the screens whose conversion moved', async () => {
    const res = await stats(0, `from=${new Date(now - 3_600_000).toISOString()}&to=${new Date(now).toISOString()}&compare=previous&journey=phone-registration`);
    expect(res.status).toBe(200);
    expect(res.body.data.compared.journeys[0].screens[1].arrived).toBe(0);
    expect(res.body.data.shifts[0]).toMatchObject({ journey: 'phone-registration', before: null });
  });

  it('keeps the statistics when an instance restarts', async () => {
    await fleet[0]!.close();
    fleet[0] = start();
    await redisReady(fleet[0].redis!);
    nodes[0] = app(fleet[0]);
    const res = await stats(0, 'since=1h&journey=phone-registration');
    for (const [state, figures] of Object.entries(PHONE_REGISTRATION)) expect({ state, ...screen(res.body, 'phone-registration', state) }).toMatchObject({ state, ...figures });
     await expectDrawn(0);
  });
});
