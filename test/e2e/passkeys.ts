import type { BrowserContext, Page } from 'playwright-core';
import { eventually } from '../support/eventually';
import { codeFromOutbox, useE2e, type E2e, type PageRun } from './harness';

/*
 * What the passkey walks in Chromium share: the service with passkeys on for its own origin
 * (http://localhost:<port>), a DevTools virtual authenticator standing in for the fingerprint,
 * and the demo page's phone login by SMS code that comes before an enrolment.
 */

/** A credential as the DevTools protocol exports it (its private key too), to put on another page's authenticator. */
export type Credential = unknown;

/** The sandbox with passkeys on, bound to the origin the browser opens. */
export const usePasskeyE2e = (config: Record<string, unknown> = {}) =>
  useE2e((origin) => ({ passkeys: { enabled: true, rp_id: 'localhost', origins: [origin] }, ...config }));

/** A virtual authenticator on `page` (ctap2, internal, resident keys, user verified), holding `credentials` another page's made. */
export async function virtualAuthenticator(context: BrowserContext, page: Page, credentials: Credential[] = []) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  for (const credential of credentials)
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: credential as never });
  return {
    credentials: async () =>
      (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials as Credential[],
  };
}

export async function openDemo(e2e: E2e, page: Page): Promise<void> {
  await page.goto(`${e2e.origin}/demo`);
  await page.locator('body[data-ready="true"]').waitFor();
}

/** An action asked over HTTP, as another device would: its envelope. */
export async function postAction(
  e2e: E2e,
  action: string,
  body: object,
): Promise<{ success: boolean; data: Record<string, unknown> }> {
  const res = await fetch(`${e2e.service.url}/?action=${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { success: boolean; data: Record<string, unknown> };
}

/** The sandbox's SMS to `phone` so far. */
export const smsTo = (e2e: E2e, phone: string) =>
  e2e.service.sandbox!.outbox.list('sms').filter((m) => m.to.includes(phone.slice(1)));

/** The demo's phone login by SMS code, typed: the identifier (focused on load), Enter, the code from the outbox, Enter; at 90. */
export async function demoCodeLogin(e2e: E2e, run: PageRun, phone: string): Promise<void> {
  const { page } = run;
  expect(await page.evaluate<string>('document.activeElement ? document.activeElement.id : ""')).toBe('identifier');
  const before = smsTo(e2e, phone).length;
  await page.keyboard.type(phone);
  // Within the cooldown of the last code the service answers already_sent: Enter again, as a person would.
  await eventually(
    async () => {
      if (await page.locator('#view-code').isHidden()) await page.keyboard.press('Enter');
      await page.locator('#view-code:not([hidden])').waitFor({ timeout: 1_500 });
    },
    { timeoutMs: 15_000, intervalMs: 300 },
  );
  await page.keyboard.type(await codeFromOutbox(run, 'sms', phone.slice(1), before));
  await page.keyboard.press('Enter');
  await page.locator('#view-success:not([hidden])').waitFor();
}
