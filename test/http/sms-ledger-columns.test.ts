import nock from 'nock';
import request from 'supertest';
import { formatLedger, type LedgerReport } from '../../scripts/ledger';
import { twilioSignature } from '../../src/clients/twilio';
import type { LedgerGroup } from '../../src/domain/sms/ledger';
import { testApp, testConfig, testDeps } from '../support/app';
import { useNock } from '../support/nock';

/*
 * The ledger explains itself: every group's columns add up to what it sent (delivered, failed,
 * waiting for a receipt, no receipt expected, receipt late), in the first minute while receipts
 * are still due and after they are late; a provider that posts no receipts is said to, on the
 * page and in the terminal, and its sends are not counted as receipts that never came.
 */

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'twilio-token';
const KEY = 'operator-key-0123456789';
const BASE = 'https://login.example.com';
const ITALIAN = ['+393331234561', '+393331234562', '+393331234563'];
const BRITISH = ['+447400123451', '+447400123452'];

function setup(locale = 'it') {
  const clock = { now: 1_900_000_000_000 };
  const config = testConfig({
    otp: { debug: true },
    security: { internal_key: KEY },
    mail: { default_locale: locale },
    sms: {
      providers: [
        {
          kind: 'twilio',
          countries: ['IT'],
          account_sid: SID,
          auth_token: TOKEN,
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
      receipts: { callback_base_url: BASE, timeout_seconds: 60 },
      allowed_regions: ['IT', 'GB'],
      breaker: { failures: 2 },
    },
  });
  const app = testApp(testDeps(config, { now: () => clock.now })).callback();
  return { app, clock };
}

const sum = (g: LedgerGroup) => g.delivered + g.failed + g.waiting + g.no_receipt + g.unknown;

async function report(app: ReturnType<typeof setup>['app']): Promise<LedgerReport> {
  const answer = await request(app).get('/_sms/ledger').set('x-internal-key', KEY);
  expect(answer.status).toBe(200);
  return answer.body.data as LedgerReport;
}

describe('the SMS ledger columns', () => {
  useNock();

  it('add up to what was sent in the first minute (receipts due) and after (receipts late), a provider without receipts marked as such', async () => {
    const { app, clock } = setup();
    const callbacks: string[] = [];
    ITALIAN.forEach((to, i) =>
      nock('https://twilio.example.test')
        .post(
          `/2010-04-01/Accounts/${SID}/Messages.json`,
          (body: Record<string, string>) => body.To === to && callbacks.push(body.StatusCallback ?? '') > 0,
        )
        .reply(201, { sid: `SM${i}`, status: 'queued' }),
    );
    nock('https://gateway.example.test').post('/send').times(BRITISH.length).reply(200, {});
    for (const to of [...ITALIAN, ...BRITISH])
      expect((await request(app).post('/otp_generate').send({ uid: to })).body.error).toBeNull();

    const signed = (i: number, status: string) => {
      const form = { AccountSid: SID, MessageSid: `SM${i}`, MessageStatus: status };
      return request(app)
        .post(callbacks[i]!.replace(BASE, ''))
        .type('form')
        .set('X-Twilio-Signature', twilioSignature(TOKEN, callbacks[i]!, form))
        .send(form);
    };
    expect((await signed(0, 'delivered')).status).toBe(204);
    expect((await signed(1, 'undelivered')).status).toBe(204);

    clock.now += 20_000;
    const early = await report(app);
    for (const group of early.totals) expect(sum(group)).toBe(group.sent);
    expect(early.totals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          provider: 'twilio',
          sent: 3,
          delivered: 1,
          failed: 1,
          waiting: 1,
          no_receipt: 0,
          unknown: 0,
        }),
        expect.objectContaining({
          provider: 'gateway',
          sent: 2,
          delivered: 0,
          failed: 0,
          waiting: 0,
          no_receipt: 2,
          unknown: 0,
        }),
      ]),
    );
    expect(early.breakers).toEqual([
      { provider: 'twilio', channel: 'sms', state: 'closed', receipts: true },
      { provider: 'gateway', channel: 'sms', state: 'closed', receipts: false },
    ]);

    clock.now += 60_000;
    const late = await report(app);
    for (const group of late.totals) expect(sum(group)).toBe(group.sent);
    expect(late.totals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ provider: 'twilio', sent: 3, delivered: 1, failed: 1, waiting: 0, unknown: 1 }),
        // A provider that posts no receipts has none late: its sends stay "no receipts".
        expect.objectContaining({ provider: 'gateway', sent: 2, no_receipt: 2, unknown: 0 }),
      ]),
    );

    const page = (await request(app).get('/sms').set('x-internal-key', KEY)).text;
    expect(page).toMatch(
      /<th>Inviati<\/th><th>Non inviati<\/th><th>Tentati<\/th><th>Consegnati<\/th><th>Falliti<\/th><th>In attesa<\/th><th>Senza ricevute<\/th><th>Ricevuta in ritardo<\/th>/,
    );
    expect(page).toContain('Inviati = Consegnati + Falliti + In attesa');
    expect(page).toMatch(/<tr><td>gateway<\/td><td>SMS<\/td><td>in funzione<\/td><td>senza ricevute<\/td><\/tr>/);
    expect(page).toMatch(/<tr><td>twilio<\/td><td>SMS<\/td><td>in funzione<\/td><td>con ricevute<\/td><\/tr>/);
    const terminal = formatLedger(late, 'en');
    expect(terminal).toMatch(/IT\s+twilio\s+sms\s+3\s+0\s+3\s+1\s+1\s+0\s+0\s+1\s+0\s+0\.0%/);
    expect(terminal).toMatch(/GB\s+gateway\s+sms\s+2\s+0\s+2\s+0\s+0\s+0\s+2\s+0\s+0\s+0\.0%/);
    expect(terminal).toContain('gateway (SMS): working; no receipts');
  });

  it('shows a pumping block and an open circuit in words, with local readable times', async () => {
    const { app } = setup();
    nock('https://twilio.example.test').post(`/2010-04-01/Accounts/${SID}/Messages.json`).times(5).reply(503, {});
    for (const to of ITALIAN) await request(app).post('/otp_generate').send({ uid: to });
    const text = formatLedger(
      {
        since: new Date(Date.UTC(2026, 10, 27, 13, 0)).toISOString(),
        totals: [],
        blocks: [{ range: '447520', until: new Date(Date.UTC(2026, 10, 27, 14, 3)).toISOString() }],
        breakers: (await report(app)).breakers,
      },
      'it',
    );
    expect(text).toContain('twilio (SMS): escluso dopo troppi errori di fila, riprovato più tardi; con ricevute');
    expect(text).toMatch(
      /\+447520… bloccata fino al 27 nov 2026, \d\d:03:00 \S+: molti codici verso questa numerazione e quasi nessuno verificato/,
    );
    expect(text).not.toMatch(/\d{4}-\d\d-\d\dT/);
    // The three sends Twilio answered 503 (no backup serves IT) are not sent, each counted once under Twilio.
    const { not_sent: notSent, totals } = await report(app);
    expect(notSent).toEqual([
      { provider: 'twilio', channel: 'sms', reason: 'error', count: 2 },
      { provider: 'twilio', channel: 'sms', reason: 'circuit_open', count: 1 },
    ]);
    expect(totals).toEqual([
      expect.objectContaining({ country: 'IT', provider: 'twilio', attempted: 3, not_sent: 3, sent: 0 }),
    ]);
  });
});
