import type { Page } from 'playwright-core';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { eventually } from '../support/eventually';
import { withPage, type PageRun } from './harness';
import {
  demoCodeLogin,
  openDemo,
  postAction,
  smsTo as smsOf,
  usePasskeyE2e,
  virtualAuthenticator,
  type Credential,
} from './passkeys';

/*
 * The demo page's passkeys walked keyboard-only in Chromium, with a DevTools virtual
 * authenticator (ctap2, internal, resident keys, user verification) standing in for the
 * fingerprint: a phone login by SMS code, the offer accepted, then on fresh pages of the same
 * browser (its cookie kept) a login by the browser's autofill and one by "Usa la passkey", with
 * no SMS sent for either; a decline remembered; a deleted passkey answered in words. Served at
 * http://localhost (browsers refuse an IP as relying party).
 */

const mario = sandboxSeedUsers[0]!;
const MARIO_PHONE = '+393331234567';

const focusedId = (page: Page) => page.evaluate<string>('document.activeElement ? document.activeElement.id : ""');
const text = (page: Page, selector: string) => page.locator(selector).innerText();

describe('the demo page with passkeys, keyboard only', () => {
  // Mario logs in by code in every test: the shortest wait between his codes.
  const e2e = usePasskeyE2e({ otp: { resend_cooldown_seconds: 1 } });
  const smsTo = (phone: string) => smsOf(e2e(), phone);
  const open = (page: Page) => openDemo(e2e(), page);
  const codeLogin = (run: PageRun) => demoCodeLogin(e2e(), run, MARIO_PHONE);

  /** The passkey the first test made, as its authenticator exported it. */
  let made: Credential[] = [];

  it('logs in by code, enrols when offered, then logs in by autofill and by "Usa la passkey" with no SMS', async () => {
    await withPage(e2e(), 'passkeys demo walk', async (run) => {
      const { page, context } = run;
      const first = await virtualAuthenticator(context, page);
      await open(page);
      // The field the browser's autofill offers passkeys from.
      expect(await page.locator('#identifier').getAttribute('autocomplete')).toBe('username webauthn');
      const smsBefore = smsTo(MARIO_PHONE).length;
      await codeLogin(run);
      expect(smsTo(MARIO_PHONE)).toHaveLength(smsBefore + 1);

      // The offer, focused first: Enter accepts, the virtual authenticator confirms.
      expect(await text(page, '#passkey-offer-title')).toBe('Accedi più in fretta la prossima volta, senza codice');
      expect(await focusedId(page)).toBe('passkey-accept');
      await page.keyboard.press('Enter');
      await page.locator('#status', { hasText: 'Passkey creata' }).waitFor();
      expect(await page.locator('#passkey-offer').isHidden()).toBe(true);
      expect((await context.cookies()).find((c) => c.name === 'lfa_pk')).toMatchObject({
        value: '1',
        sameSite: 'Lax',
      });
      made = await first.credentials();
      expect(made).toHaveLength(1);
      // The step panel followed the enrolment's steps, outside the contract's numbers: 103, its journey named.
      expect(await text(page, '#step-number')).toBe('103');
      expect(await text(page, '#journey-current')).toBe('Percorso: Passkey creata dopo un accesso con il telefono');

      // A fresh page of the same browser: the cookie kept, the passkey on the authenticator.
      const autofillPage = await context.newPage();
      await virtualAuthenticator(context, autofillPage, made);
      await open(autofillPage);
      await autofillPage.locator('#view-success:not([hidden])').waitFor();
      expect(await text(autofillPage, '#success-detail')).toContain('Accesso con la passkey');
      // The panel: 90 reached from the login screen by the passkey's own path (101 passed within the request).
      expect(await text(autofillPage, '#step-number')).toBe('90');
      expect(await text(autofillPage, '#journey-current')).toBe('Percorso: Accesso con la passkey');
      expect(await text(autofillPage, '#success-uid')).toBe(mario.uid);
      await autofillPage.close();

      // "Usa la passkey": first on the identifier screen of a browser with the cookie.
      const buttonPage = await context.newPage();
      await open(buttonPage);
      await virtualAuthenticator(context, buttonPage, made);
      expect(await buttonPage.locator('#use-passkey').isVisible()).toBe(true);
      expect(await focusedId(buttonPage)).toBe('use-passkey');
      await buttonPage.keyboard.press('Enter');
      await buttonPage.locator('#view-success:not([hidden])').waitFor();
      expect(await text(buttonPage, '#success-uid')).toBe(mario.uid);
      await buttonPage.close();

      // One SMS for the three logins.
      expect(smsTo(MARIO_PHONE)).toHaveLength(smsBefore + 1);
    });
  }, 120_000);

  it('remembers a decline on that browser: no offer at the next code login', async () => {
    await withPage(e2e(), 'passkeys demo decline', async (run) => {
      const { page, context } = run;
      await open(page);
      await codeLogin(run);
      expect(await focusedId(page)).toBe('passkey-accept');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('passkey-decline');
      await page.keyboard.press('Space');
      await page.locator('#status', { hasText: 'non te lo chiederemo' }).waitFor();
      expect(await page.locator('#passkey-offer').isHidden()).toBe(true);
      expect(await focusedId(page)).toBe('success-title');
      expect((await context.cookies()).map((c) => c.name)).not.toContain('lfa_pk');

      await open(page);
      await codeLogin(run);
      expect(await page.locator('#passkey-offer').isHidden()).toBe(true);
      expect(run.exchanges.filter((e) => e.action.startsWith('PasskeyEnrol'))).toEqual([]);
    });
  }, 120_000);

  it('says in words that a deleted passkey is no longer valid, and offers the code', async () => {
    // Mario deletes his passkeys elsewhere (PasskeyList and PasskeyDelete with a fresh login's proof).
    const post = async (action: string, body: object) => (await postAction(e2e(), action, body)).data;
    const sent = smsTo(MARIO_PHONE).length;
    await eventually(
      async () => {
        await post('FeLogin', { identifier: MARIO_PHONE });
        if (smsTo(MARIO_PHONE).length === sent) throw new Error('no new code yet (already_sent)');
      },
      { timeoutMs: 10_000, intervalMs: 300 },
    );
    const code = smsTo(MARIO_PHONE)[0]!.code;
    const { proof } = await post('FeVerifyOtp', { flow: 'phone', phone: MARIO_PHONE, otp_code: code });
    const { passkeys } = (await post('PasskeyList', { proof })) as { passkeys: Array<{ id: string }> };
    expect(passkeys.length).toBeGreaterThan(0);
    for (const { id } of passkeys) expect(await post('PasskeyDelete', { proof, id })).toEqual({ deleted: true });

    await withPage(e2e(), 'passkeys demo unknown', async (run) => {
      const { page, context } = run;
      // The browser that enrolled: its cookie and its authenticator, whose autofill offers the deleted passkey.
      await context.addCookies([{ name: 'lfa_pk', value: '1', url: e2e().origin, sameSite: 'Lax' }]);
      await virtualAuthenticator(context, page, made);
      await open(page);
      await page.locator('#error', { hasText: 'non è più valida' }).waitFor();
      expect(await text(page, '#error')).toBe(
        'Questa passkey non è più valida: è stata eliminata o revocata. Accedi con un codice: inserisci la tua email o il tuo numero.',
      );
      expect(run.exchanges.find((e) => e.action === 'PasskeyLogin')?.answer.data).toMatchObject({
        reason: 'passkey_unknown',
      });
      // The code, the usual path, focused; the cookie gone.
      expect(await page.locator('#passkey-offered').isHidden()).toBe(true);
      expect(await focusedId(page)).toBe('identifier');
      expect((await context.cookies()).map((c) => c.name)).not.toContain('lfa_pk');
    });
  }, 120_000);
});
