import pino from 'pino';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';

/*
 * POST /_sandbox/reset: a developer starts over without waiting out a cooldown or a limit. It
 * forgets codes, cooldowns, limits, the SMS ledger, the outbox and what the walkthrough did to
 * the fake accounts (test/docs/readme-walkthrough.test.ts walks docs/getting-started.md twice over it); it exists only in a sandbox whose stores live in this process.
 */

const silent = pino({ level: 'silent' });
const PHONE = '+393331234567';

describe('the sandbox reset', () => {
  let service: Service;
  const post = (path: string, body: unknown = {}) =>
    fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as { success: boolean; data: Record<string, unknown> },
    }));

  beforeAll(async () => {
    service = await startService(testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port: 0 } }), {
      log: silent,
      otpLog: silent,
    });
  });
  afterAll(() => service.close());

  it('clears the cooldown, the limits, the ledger and the outbox, so the same phone gets a code at once', async () => {
    expect((await post('/otp_generate', { uid: PHONE })).body.success).toBe(true);
    expect((await post('/otp_generate', { uid: PHONE })).body.data.reason).toBe('already_sent');

    const reset = await post('/_sandbox/reset');
    expect(reset).toMatchObject({
      status: 200,
      body: { success: true, data: { cleared: ['codes', 'cooldowns', 'limits', 'sms_ledger', 'outbox'] } },
    });
    expect(service.sandbox!.outbox.list()).toEqual([]);
    expect(await service.deps.sms.ledger.since(0)).toEqual([]);

    expect((await post('/otp_generate', { uid: PHONE })).body.success).toBe(true);
    expect(service.sandbox!.outbox.to(PHONE)).toHaveLength(1);
  });

  it("answers the outbox page's button (a plain form, no script) by going back to the page", async () => {
    const res = await fetch(`${service.url}/_sandbox/reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/_sandbox/outbox.html');
    const page = await fetch(`${service.url}/_sandbox/outbox.html`).then((r) => r.text());
    expect(page).toContain('<form method="post" action="/_sandbox/reset">');
  });
});

describe('outside a sandbox', () => {
  it('has no reset route', async () => {
    const service = await startService(testConfig({ server: { host: '127.0.0.1', port: 0 } }), {
      log: silent,
      otpLog: silent,
    });
    try {
      const res = await fetch(`${service.url}/_sandbox/reset`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(404);
    } finally {
      await service.close();
    }
  });
});
