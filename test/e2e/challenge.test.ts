import type { Page } from 'playwright-core';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { codeFromOutbox, useE2e, withPage, type Exchange } from './harness';

/*
 * The bot challenge in the reference page (GET /demo), headless Chromium, `challenge.mode:
 * always` at the default difficulty: FeLogin is answered `challenge_required`, the page shows
 * ALTCHA's widget with the challenge, the keyboard ticks it (Space), the browser solves the
 * proof of work, and the page repeats FeLogin with the solution: 14, the code, 90. No console
 * error (a CSP violation is one). The time the browser took is written for docs/security.md.
 */

const mario = sandboxSeedUsers[0]!;
const e2e = useE2e({ challenge: { mode: 'always' } });

/** The solver's own time (ms), as the widget put it in its payload. */
const solverTime = (exchange: Exchange): number =>
  (
    JSON.parse(Buffer.from(String(exchange.body.challenge), 'base64').toString('utf8')) as {
      solution: { time: number };
    }
  ).solution.time;

const focusedTag = (page: Page) =>
  page.evaluate<string>(
    'document.activeElement ? `${document.activeElement.tagName.toLowerCase()}:${document.activeElement.getAttribute("type") ?? ""}` : ""',
  );

describe('the bot challenge in the reference login page', () => {
  it('solves a real proof of work in the page with the keyboard only and reaches 90', async () => {
    await withPage(e2e(), 'phone login with a bot challenge', async (run) => {
      const { page, exchanges } = run;
      await page.goto(`${e2e().service.url}/demo`);
      await page.locator('body[data-ready="true"]').waitFor();

      await page.keyboard.type('+39 333 123 4567');
      await page.keyboard.press('Enter');
      await page.locator('#challenge:not([hidden]) altcha-widget input[type="checkbox"]').waitFor();
      expect(await page.locator('#challenge-text').innerText()).toBe(
        'Verifica anti-bot richiesta: completa la verifica e riprova.',
      );
      await page.waitForFunction(
        'document.activeElement && document.activeElement.getAttribute("type") === "checkbox"',
      );
      expect(await focusedTag(page)).toBe('input:checkbox');
      expect(await page.locator('#challenge altcha-widget label').first().innerText()).toBe('Non sono un robot');

      await page.keyboard.press('Space');
      await page.locator('#step-number', { hasText: /^14$/ }).waitFor({ timeout: 60_000 });
      expect(await page.locator('#challenge').isHidden()).toBe(true);

      const logins = exchanges.filter((x: Exchange) => x.action === 'FeLogin');
      expect(logins.map((x) => x.answer.data.reason ?? x.answer.data.next_step)).toEqual(['challenge_required', 14]);
      expect(typeof logins[1]!.body.challenge).toBe('string');
      // The widget's own payload: a solution it worked out, with the time it took.
      expect(solverTime(logins[1]!)).toEqual(expect.any(Number));

      const code = await codeFromOutbox(run, 'sms', '+393331234567');
      await page.locator('#otp-code').focus();
      await page.keyboard.type(code);
      await page.keyboard.press('Enter');
      await page.locator('#step-number', { hasText: /^90$/ }).waitFor();
      expect(await page.locator('#success-uid').innerText()).toBe(mario.uid);
    });
  }, 90_000);
});
