import type { Page } from 'playwright-core';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { codeFromOutbox, useE2e, withPage } from './harness';

/*
 * The reference login page in headless Chromium with Italy configured [whatsapp, sms]: the
 * code of a phone login arrives "on WhatsApp" and the page says so; a number the fake marks as
 * not on WhatsApp gets it by SMS in the same request, and the page says that too.
 */

const mario = sandboxSeedUsers[0]!;
const TEST_TIMEOUT = 30_000;
const e2e = useE2e({ sms: { channels: { IT: ['whatsapp', 'sms'] } } });

async function open(page: Page): Promise<void> {
  await page.goto(`${e2e().service.url}/demo`);
  await page.locator('body[data-ready="true"]').waitFor();
}

describe('the reference login page, with codes by WhatsApp', () => {
  afterEach(() => e2e().service.sandbox!.reset());

  it(
    'logs the seeded user in with a code that came on WhatsApp: 14, "ti abbiamo scritto su WhatsApp", 90',
    async () => {
      await withPage(e2e(), 'phone login by WhatsApp', async (run) => {
        const { page } = run;
        await open(page);
        await page.keyboard.type('+39 333 123 4567');
        await page.keyboard.press('Enter');
        await page.locator('#step-number', { hasText: /^14$/ }).waitFor();
        expect(await page.locator('#code-title').innerText()).toBe('Inserisci il codice ricevuto su WhatsApp');
        expect(await page.locator('#code-sent').innerText()).toContain(
          'Ti abbiamo scritto su WhatsApp al numero +39 333 123 4567',
        );
        await page.keyboard.type(await codeFromOutbox(run, 'whatsapp', '+393331234567'));
        await page.keyboard.press('Enter');
        await page.locator('#step-number', { hasText: /^90$/ }).waitFor();
        expect(await page.locator('#success-uid').innerText()).toBe(mario.uid);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'falls back to SMS for a number not on WhatsApp, and says so',
    async () => {
      e2e().service.sandbox!.smsFaults.setWhatsApp('+393331234567', 'absent');
      await withPage(e2e(), 'phone login, not on WhatsApp', async (run) => {
        const { page } = run;
        await open(page);
        await page.keyboard.type('+39 333 123 4567');
        await page.keyboard.press('Enter');
        await page.locator('#step-number', { hasText: /^14$/ }).waitFor();
        expect(await page.locator('#code-title').innerText()).toBe('Inserisci il codice ricevuto per SMS');
        expect(await page.locator('#code-sent').innerText()).toBe(
          'Su WhatsApp non ti abbiamo raggiunto: abbiamo inviato un codice per SMS al numero +39 333 123 4567.',
        );
        await page.keyboard.type(await codeFromOutbox(run, 'sms', '+393331234567'));
        await page.keyboard.press('Enter');
        await page.locator('#step-number', { hasText: /^90$/ }).waitFor();
      });
    },
    TEST_TIMEOUT,
  );
});
