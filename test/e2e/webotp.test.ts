import type { Page } from 'playwright-core';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { codeFromOutbox, useE2e, withPage } from './harness';

/*
 * One-tap codes on the reference page: where the browser has the WebOTP API, the page asks it
 * for the SMS code (`navigator.credentials.get({ otp: { transport: ['sms'] } })`), fills the
 * field and submits. Headless Chromium receives no SMS, so the API is stood in for before the
 * page loads: the stand-in records each request and hands over the code the test reads from the
 * outbox, as the phone's SMS would. The typed code path stays the one demo-page.test.ts walks.
 */

const mario = sandboxSeedUsers[0]!;
const TEST_TIMEOUT = 30_000;

const e2e = useE2e();

/** Installs the WebOTP stand-in: `window.__otp.requests` lists the requests, `window.__otp.deliver(code)` answers the pending one. */
async function standInWebOtp(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = globalThis as unknown as Record<string, unknown>;
    const requests: Array<{ transport: string[]; hasSignal: boolean; aborted: boolean }> = [];
    let pending: ((credential: { code: string; type: string }) => void) | null = null;
    w.OTPCredential = function OTPCredential() {};
    w.__otp = { requests, deliver: (code: string) => pending?.({ code, type: 'otp' }) };
    const credentials = (
      w.navigator as { credentials: { get: (options: Record<string, unknown>) => Promise<unknown> } }
    ).credentials;
    credentials.get = (options) => {
      const otp = options.otp as { transport: string[] };
      const signal = options.signal as AbortSignal | undefined;
      const request = { transport: otp.transport, hasSignal: signal !== undefined, aborted: false };
      requests.push(request);
      return new Promise((resolve, reject) => {
        pending = resolve;
        signal?.addEventListener('abort', () => {
          request.aborted = true;
          reject(new DOMException('aborted', 'AbortError'));
        });
      });
    };
  });
}

const otpRequests = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { __otp: { requests: unknown[] } }).__otp.requests);

describe('one-tap codes on the reference page', () => {
  it(
    'marks the code field for one-time-code autofill',
    async () => {
      await withPage(e2e(), 'code field autocomplete', async ({ page }) => {
        await page.goto(`${e2e().service.url}/demo`);
        await page.locator('body[data-ready="true"]').waitFor();
        expect(await page.locator('#otp-code').getAttribute('autocomplete')).toBe('one-time-code');
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'takes the SMS code from the WebOTP API, fills the field and submits it: 90 without typing',
    async () => {
      await withPage(e2e(), 'webotp fills and submits the sms code', async (run) => {
        const { page } = run;
        await standInWebOtp(page);
        await page.goto(`${e2e().service.url}/demo`);
        await page.locator('body[data-ready="true"]').waitFor();
        await page.locator('#identifier').fill('+39 333 123 4567');
        await page.keyboard.press('Enter');
        await page.locator('#step-number', { hasText: /^14$/ }).waitFor();
        expect(await otpRequests(page)).toEqual([{ transport: ['sms'], hasSignal: true, aborted: false }]);

        const code = await codeFromOutbox(run, 'sms', '+393331234567');
        await page.evaluate(
          (c) => (globalThis as unknown as { __otp: { deliver(code: string): void } }).__otp.deliver(c),
          code,
        );
        await page.locator('#step-number', { hasText: /^90$/ }).waitFor();
        expect(await page.locator('#success-uid').innerText()).toBe(mario.uid);
        const verify = run.exchanges.filter((x) => x.action === 'FeVerifyOtp');
        expect(verify).toHaveLength(1);
        expect(verify[0]!.body).toMatchObject({ otp_code: code, flow: 'phone' });
        // One read for the one SMS code, released when the page left the code view.
        expect(await otpRequests(page)).toEqual([{ transport: ['sms'], hasSignal: true, aborted: true }]);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'asks for no SMS code for an email code, and stops asking when the user starts over',
    async () => {
      await withPage(e2e(), 'webotp only for sms and aborted on restart', async ({ page }) => {
        await standInWebOtp(page);
        await page.goto(`${e2e().service.url}/demo`);
        await page.locator('body[data-ready="true"]').waitFor();
        await page.locator('#identifier').fill(mario.email);
        await page.keyboard.press('Enter');
        await page.locator('#step-number', { hasText: /^33$/ }).waitFor();
        expect(await otpRequests(page)).toEqual([]);

        await page.locator('#restart').click();
        await page.locator('#identifier').fill('+39 333 765 4321');
        await page.keyboard.press('Enter');
        await page.locator('#step-number', { hasText: /^14$/ }).waitFor();
        await page.locator('#restart').click();
        expect(await otpRequests(page)).toEqual([{ transport: ['sms'], hasSignal: true, aborted: true }]);
      });
    },
    TEST_TIMEOUT,
  );
});
