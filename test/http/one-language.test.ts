import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import request from 'supertest';
import { FUNNEL_COMMAND } from '../../scripts/funnel';
import { LEDGER_COMMAND, ledgerOutput } from '../../scripts/ledger';
import { callService, readCommand, type CommandOption, type CommandSpec } from '../../scripts/lib/service';
import type { TextLocale } from '../../src/core/text-locale';
import { testApp, testConfig, testDeps } from '../support/app';
import { freePort } from '../support/ports';

/*
 * One language per surface: the /sms page, `npm run ledger` (its report, its refusals, its
 * --help and its failure to find the service), the funnel command's --help and the answers to
 * invalid requests, read in each language the service writes, carry no word of the other. The
 * same mistake (a field left out) reads the same from a schema, a custom check and a journey.
 */

const SID = 'AC0123456789abcdef0123456789abcdef';
const KEY = 'operator-key-0123456789';

/** Words only one of the two languages uses, that any sentence of these surfaces is likely to hold. */
const TELLTALE: Record<TextLocale, RegExp> = {
  en: /\b(the|and|or|of|to|for|with|this|since|until|sent|delivered|failed|waiting|receipts?|late|providers?|country|channel|blocked|none|verified|working|conversion|required|expected|received|invalid|options?|answer|service|missing|must|empty|neither|nor|address|nothing|around)\b/i,
  it: /\b(il|la|lo|le|gli|di|del|della|dal|da|per|con|non|nessun[oa]?|questo|inviati|consegnati|falliti|attesa|ricevut[ae]|fornitor[ei]|paese|canale|bloccat[ao]|fino|verificat[io]|funzione|conversione|obbligatorio|atteso|ricevuto|opzion[ei]|risposta|servizio|mancante|valido|deve|vuoto|né|indirizzo|senza|solo)\b/i,
};

/** What is not language: code, option names, variables, addresses, quoted values. */
function prose(text: string): string {
  return text
    .replace(/<(code|style|script)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/npm run \w+( -- [^\s:;,)]+( [\w<>|.-]+)?)?/g, ' ')
    .replace(/--[\w-]+|\$?[A-Z][A-Z0-9_]{2,}|x-[\w-]+|[\w-]+\.[\w.]+|"[^"]*"|\/[\w/._-]+/g, ' ');
}

const other = (locale: TextLocale): TextLocale => (locale === 'it' ? 'en' : 'it');

function expectOneLanguage(locale: TextLocale, surface: string, text: string): void {
  const words = prose(text);
  expect({ surface, other: words.match(TELLTALE[other(locale)])?.[0] ?? null }).toEqual({ surface, other: null });
  expect({ surface, own: TELLTALE[locale].test(words) }).toEqual({ surface, own: true });
}

describe.each(['it', 'en'] as TextLocale[])('one language per surface: %s', (locale) => {
  let server: Server;
  let url: string;
  let app: ReturnType<ReturnType<typeof testApp>['callback']>;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    const clock = { now: Date.now() };
    const config = testConfig({
      otp: { debug: true },
      server: { trust_proxy_hops: 1 },
      security: { internal_key: KEY },
      mail: { default_locale: locale },
      sms: {
        allowed_regions: ['IT', 'GB'],
        providers: [
          {
            kind: 'twilio',
            countries: ['IT'],
            account_sid: SID,
            auth_token: 'tok',
            from: '+15005550006',
            api_url: 'https://twilio.example.test',
          },
          {
            kind: 'gateway',
            name: 'gateway',
            countries: ['GB'],
            api_url: 'https://gateway.example.test/send',
            api_key: 'k',
            sender: 'Login',
          },
        ],
        receipts: { callback_base_url: 'https://login.example.com', timeout_seconds: 60 },
        pumping: {
          block_min_sends: 5,
          block_min_conversion: 0.5,
          block_window_seconds: 600,
          block_seconds: 900,
          judge_after_seconds: 1,
          watch_sends_per_hour: 100,
        },
      },
    });
    app = testApp(testDeps(config, { now: () => clock.now })).callback();
    nock('https://twilio.example.test')
      .post(`/2010-04-01/Accounts/${SID}/Messages.json`)
      .times(2)
      .reply(201, { sid: 'SM1', status: 'queued' });
    nock('https://gateway.example.test').post('/send').times(10).reply(200, {});
    let ip = 0;
    const send = (uid: string) =>
      request(app).post('/otp_generate').set('X-Forwarded-For', `10.0.0.${++ip}`).send({ uid });
    await send('+393331234561');
    clock.now += 61_000;
    await send('+393331234562');
    // A pumping campaign on one British range: judged once its codes are past the grace, watched, then blocked.
    for (let i = 0; i < 6; i += 1) await send(`+4475206${String(10000 + i).slice(-5)}`);
    for (let i = 6; i < 8; i += 1) {
      clock.now += 2_000;
      await send(`+4475206${String(10000 + i).slice(-5)}`);
    }
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    nock.cleanAll();
    nock.enableNetConnect();
  });

  it('the /sms page: headings, columns, states, blocks and circuits', async () => {
    const page = (await request(app).get('/sms').set('x-internal-key', KEY)).text;
    expect(page).toContain(`<html lang="${locale}">`);
    // Every state the page shows here, a block, both receipt kinds.
    expect(page).toMatch(
      locale === 'it'
        ? /in attesa della ricevuta[\s\S]*ricevuta in ritardo|ricevuta in ritardo[\s\S]*in attesa della ricevuta/
        : /waiting for its receipt[\s\S]*receipt late|receipt late[\s\S]*waiting for its receipt/,
    );
    expect(page).toContain(locale === 'it' ? 'bloccata fino al' : 'blocked until');
    expect(page).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
    expectOneLanguage(locale, '/sms', page);
  });

  it('npm run ledger: the report, a refusal, --help, and a service it cannot reach', async () => {
    const report = await ledgerOutput({
      url,
      locale,
      sinceSeconds: 3600,
      key: { header: 'x-internal-key', value: KEY, from: '--key' },
      json: false,
    });
    expect(report).toContain(locale === 'it' ? 'Numerazioni bloccate' : 'Blocked ranges');
    expectOneLanguage(locale, 'ledger report', report);

    const refused = await ledgerOutput({
      url,
      locale,
      sinceSeconds: 3600,
      key: { header: 'x-internal-key', value: 'not-the-key', from: 'SECURITY__INTERNAL_KEY' },
      json: false,
    }).catch((err: Error) => err.message);
    expect(refused).toContain(
      locale === 'it'
        ? 'il servizio ha rifiutato la chiave presa da SECURITY__INTERNAL_KEY'
        : 'the service refused the key taken from SECURITY__INTERNAL_KEY',
    );
    expectOneLanguage(locale, 'ledger refusal', refused);

    const LANG = locale === 'it' ? 'it_IT.UTF-8' : 'en_US.UTF-8';
    for (const spec of [LEDGER_COMMAND, FUNNEL_COMMAND] as Array<CommandSpec<Record<string, CommandOption>>>) {
      const help = readCommand(spec, ['--help'], { LANG });
      expectOneLanguage(locale, `${spec.usage.split(' -- ')[0]} --help`, (help as { help: string }).help);
      // --locale outranks the terminal.
      const chosen = readCommand(spec, ['--help', '--locale', locale], {
        LANG: locale === 'it' ? 'en_US.UTF-8' : 'it_IT.UTF-8',
      });
      expectOneLanguage(locale, `${spec.usage.split(' -- ')[0]} --help --locale`, (chosen as { help: string }).help);
    }
    const port = await freePort();
    const unreachable = await callService({ url: `http://127.0.0.1:${port}`, locale }, '/_sms/ledger').then(
      () => '',
      (err: Error) => err.message,
    );
    expect(unreachable).toContain(`http://127.0.0.1:${port}`);
    expectOneLanguage(locale, 'no answer', unreachable);
    expectOneLanguage(
      locale,
      'unknown option',
      (() => {
        try {
          readCommand(LEDGER_COMMAND, ['--nope'], { LANG });
          return '';
        } catch (err) {
          return (err as Error).message;
        }
      })(),
    );
  });

  const MISTAKES: Array<[string, Record<string, unknown>]> = [
    ['otp_generate', {}],
    ['verify_otp', { email: '+393331234567' }],
    ['FeLogin', {}],
    ['FeLogin', { identifier: 'x' }],
    ['FeLogin', { identifier: 5 }],
    ['FeVerifyOtp', { flow: 'phone' }],
    ['FeAddPhone', {}],
    ['newsletter_subscribe', { email: 'a@b.example' }],
    ['newsletter_subscribe', { email: 'a@b.example', mlids: '', testata: 'head_a' }],
    ['register', { email: 'not an email' }],
  ];

  it.each(MISTAKES)("answers %s %j in the request's language, the error and every issue", async (action, body) => {
    const answer = await request(app).post(`/?action=${action}`).set('accept-language', locale).send(body);
    expect(answer.body.success).toBe(false);
    const issues = (answer.body.data.issues ?? []) as Array<{ message: string }>;
    expectOneLanguage(locale, `${action} error`, answer.body.error);
    for (const issue of issues) expectOneLanguage(locale, `${action} issue`, issue.message);
  });

  it("answers in the service's language a client that names none (the typed client)", async () => {
    const answer = await request(app).post('/FeLogin').send({ identifier: 'x' });
    expectOneLanguage(
      locale,
      'FeLogin without Accept-Language',
      `${answer.body.error} ${answer.body.data.issues[0].message}`,
    );
  });

  it('words a field left out the same way whichever check finds it: a schema, a custom check, a journey', async () => {
    const missing = async (action: string, body: Record<string, unknown>, field: string) => {
      const answer = await request(app).post(`/${action}`).set('accept-language', locale).send(body);
      return (answer.body.data.issues as Array<{ path: string; message: string }>).find((issue) => issue.path === field)
        ?.message;
    };
    const required = locale === 'it' ? 'è obbligatorio' : 'is required';
    expect(await missing('otp_generate', {}, 'uid')).toBe(required);
    expect(await missing('FeLogin', {}, 'identifier')).toBe(required);
    expect(await missing('FeAddPhone', {}, 'phone')).toBe(required);
    expect(await missing('FeVerifyOtp', { flow: 'phone' }, 'otp_code')).toBe(required);
  });
});
