import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import type { LedgerReport } from '../../scripts/ledger';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';

/*
 * An SMS outage as the ledger shows it, on what the running service produces: the sandbox's two
 * SMS providers broken through their fault switches (POST <fakes>/faults/sms/<provider>/error_5xx),
 * phone logins answered delivery_failed, then /_sms/ledger, the /sms page and `npm run ledger`
 * read. Every message tried is counted once, sent or not sent, under the last provider asked,
 * and why it was not sent; the bot challenge has a heading of its own.
 */

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const silent = pino({ level: 'silent' });
const FAILED = 8;

describe('the SMS ledger during an outage of every SMS provider', () => {
  let service: Service;
  const login = (phone: string) =>
    fetch(`${service.url}/FeLogin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: phone }),
    }).then((r) => r.json() as Promise<{ success: boolean; data: { reason?: string; next_step?: number } }>);
  const fault = (provider: string, which: string) =>
    fetch(`${service.sandbox!.baseUrl}/faults/sms/${provider}/${which}`, { method: 'POST' });

  beforeAll(async () => {
    service = await startService(testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port: 0 } }), {
      log: silent,
      otpLog: silent,
    });
    // One code goes out before the outage.
    expect(await login('+393331230000')).toMatchObject({ success: true, data: { next_step: 14 } });
    for (const provider of ['gateway', 'twilio']) expect((await fault(provider, 'error_5xx')).ok).toBe(true);
    for (let i = 1; i <= FAILED; i++)
      expect(await login(`+39333123${String(i).padStart(4, '0')}`)).toMatchObject({
        success: false,
        data: { reason: 'delivery_failed' },
      });
  });
  afterAll(() => service.close());

  it('counts the sends no provider took beside those sent, by reason and provider: sent + not sent = tried', async () => {
    const report = (
      (await fetch(`${service.url}/_sms/ledger?since=3600`).then((r) => r.json())) as { data: Required<LedgerReport> }
    ).data;
    for (const group of report.totals) expect(group.sent + group.not_sent).toBe(group.attempted);
    const totals = (field: 'sent' | 'not_sent' | 'attempted') => report.totals.reduce((sum, g) => sum + g[field], 0);
    expect({ sent: totals('sent'), not_sent: totals('not_sent'), attempted: totals('attempted') }).toEqual({
      sent: 1,
      not_sent: FAILED,
      attempted: FAILED + 1,
    });
    // The gateway first, Twilio its backup: each failed send ends on Twilio. Five 503s open both circuits (sms.breaker.failures), then nobody is asked.
    expect(report.not_sent).toEqual([
      { provider: 'twilio', channel: 'sms', reason: 'error', count: 5 },
      { provider: 'twilio', channel: 'sms', reason: 'circuit_open', count: FAILED - 5 },
    ]);
    expect(report.totals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          country: 'IT',
          provider: 'twilio',
          channel: 'sms',
          attempted: FAILED,
          not_sent: FAILED,
          sent: 0,
        }),
        expect.objectContaining({
          country: 'IT',
          provider: 'gateway',
          channel: 'sms',
          attempted: 1,
          not_sent: 0,
          sent: 1,
        }),
      ]),
    );
    expect(report.by_channel).toEqual([
      expect.objectContaining({ country: 'IT', channel: 'sms', attempted: FAILED + 1, not_sent: FAILED, sent: 1 }),
    ]);
    // The newest sends are those that went out: a message never sent has no delivery to follow.
    expect(report.entries.map((e) => e.state)).toEqual(['no_receipt']);
  });

  it('shows them on /sms under their own heading, and the challenge under its own', async () => {
    const page = await fetch(`${service.url}/sms?since=3600`).then((r) => r.text());
    expect(page).toContain('<th>Inviati</th><th>Non inviati</th><th>Tentati</th><th>Consegnati</th>');
    expect(page).toContain('<h2>Non inviati, per motivo e fornitore</h2>');
    expect(page).toContain(
      `<tr><td>twilio</td><td>SMS</td><td>errore del fornitore (5xx o 429)</td><td class="n">5</td></tr>`,
    );
    expect(page).toContain(
      `<tr><td>twilio</td><td>SMS</td><td>non chiesto: circuito aperto dopo troppi errori di fila</td><td class="n">${FAILED - 5}</td></tr>`,
    );
    // The challenge's line is no longer under the blocked ranges' heading.
    const blocks = page.indexOf('<h2>Numerazioni bloccate');
    const challenge = page.indexOf('<h2>Verifica anti-bot</h2>');
    expect(blocks).toBeGreaterThan(0);
    expect(challenge).toBeGreaterThan(blocks);
    expect(page.slice(challenge)).toMatch(
      /^<h2>Verifica anti-bot<\/h2>\n<p>Per ore intere: chiesta 0, superata 0, fallita 0\.<\/p>/,
    );
  });

  it('prints them in `npm run ledger`, in the same words', async () => {
    const { stdout } = await run(TSX, ['scripts/ledger.ts', '--since', '1h', '--url', service.url], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'en_US.UTF-8' },
    });
    // sent, not sent, tried, then what became of those sent.
    expect(stdout).toMatch(/IT\s+twilio\s+sms\s+0\s+8\s+8\s+0\s+0\s+0\s+0\s+0\s+0\s+0\.0%/);
    expect(stdout).toMatch(/IT\s+gateway\s+sms\s+1\s+0\s+1\s+0\s+0\s+0\s+1\s+0\s+0\s+0\.0%/);
    expect(stdout).toContain(
      'Not sent, by reason and provider:\n  twilio (SMS): 5 · provider error (5xx or 429)\n  twilio (SMS): 3 · not asked: circuit open after too many failures in a row',
    );
    expect(stdout).toMatch(
      /Blocked ranges \(pumping defence\):\n {2}No range blocked\.\n\nBot challenge:\n {2}Whole hours: asked 0, solved 0, failed 0\./,
    );
  }, 60_000);
});
