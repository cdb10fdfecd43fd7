import nock from 'nock';
import request from 'supertest';
import { formatLedger, parseDuration, parseLedgerArgs, type LedgerReport } from '../../scripts/ledger';
import { testApp, testConfig, testDeps } from '../support/app';
import { useNock } from '../support/nock';

/* `npm run ledger`: its options, and the service's report as the terminal shows it. */

describe('npm run ledger', () => {
  useNock();

  it('reads --since as seconds, minutes, hours or days', () => {
    expect(parseDuration('1h')).toBe(3600);
    expect(parseDuration('90m')).toBe(5400);
    expect(parseDuration('7d')).toBe(604800);
    expect(parseDuration('30')).toBe(30);
    expect(() => parseDuration('soon')).toThrow(/not a duration/);
  });

  it('takes the service and the key from the environment unless given', () => {
    expect(parseLedgerArgs(['--since', '1h'], { SECURITY__INTERNAL_KEY: 'k', LEDGER_URL: 'http://svc:8080' })).toEqual({ sinceSeconds: 3600, url: 'http://svc:8080', key: 'k', json: false });
    expect(parseLedgerArgs(['--url', 'http://x/', '--key', 'y', '--lift', '447911'], {})).toMatchObject({ url: 'http://x', key: 'y', lift: '447911' });
    expect(() => parseLedgerArgs(['--nope'], {})).toThrow(/unknown option/);
  });

  it("prints conversion by country and provider from the service's ledger", async () => {
    const config = testConfig({ otp: { debug: true }, security: { internal_key: 'ops-key-123456' }, sms: { api_url: 'https://sms.example.test/send', api_key: 'k' } });
    const app = testApp(testDeps(config)).callback();
    nock('https://sms.example.test').post('/send').times(2).reply(200, {});
    const first = await request(app).post('/otp_generate').send({ uid: '+393331234567' });
    await request(app).post('/otp_generate').send({ uid: '+393339876543' });
    await request(app).post('/verify_otp').send({ email: '+393331234567', otp_code: first.body.data.otp });
    await new Promise((resolve) => setImmediate(resolve));
    const report = (await request(app).get('/_sms/ledger?since=3600').set('x-internal-key', 'ops-key-123456')).body.data as LedgerReport;
    const text = formatLedger(report);
    expect(text).toMatch(/IT\s+gateway\s+sms\s+2\s+0\s+0\s+0\s+1\s+50\.0%/);
    expect(text).toContain('Blocked ranges: none');
    expect(text).toContain('Providers: gateway closed');
  });
});
