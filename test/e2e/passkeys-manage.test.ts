import type { Page } from 'playwright-core';
import { withPage, type PageRun } from './harness';
import { demoCodeLogin, openDemo, postAction, usePasskeyE2e, virtualAuthenticator, type Credential } from './passkeys';

/*
 * "Le tue passkey" on the demo page's success screen, walked keyboard-only in Chromium (Tab,
 * Enter, Escape and typing; no click), with a DevTools virtual authenticator as in
 * passkeys-demo.test.ts: an SMS code login, the offer accepted, the passkey listed, renamed (and
 * the service's PasskeyList agreeing), a delete cancelled then confirmed, the list saying none
 * is left, the cookie lfa_pk dropped, and that credential refused as unknown at the next login;
 * after a decline, the empty list's own "Crea una passkey".
 * Served at http://localhost (browsers refuse an IP as relying party).
 */

const MARIO_PHONE = '+393331234567';
const NEW_NAME = 'Portatile di Mario';

const focused = (page: Page) =>
  page.evaluate<{ id: string; text: string; label: string | null; tag: string }>(`(() => {
    const el = document.activeElement;
    return { id: el.id, text: el.textContent.trim(), label: el.getAttribute('aria-label'), tag: el.tagName };
  })()`);

/** Presses Tab until focus is on the element whose accessible name (or text) is `name`; fails after `max`. */
async function tabTo(page: Page, name: string, max = 15): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const now = await focused(page);
    const said = now.label ?? now.text;
    if (said === name) return;
    seen.push(`${now.tag}#${now.id} «${said.slice(0, 40)}»`);
  }
  throw new Error(`Tab never reached «${name}»; it went through ${seen.join(', ')}`);
}

/** The rows of "Le tue passkey" as a person reads them. */
const rows = (page: Page) => page.locator('#passkeys-list > li .passkey-name').allInnerTexts();

describe('managing passkeys on the demo page, keyboard only', () => {
  const e2e = usePasskeyE2e({ otp: { resend_cooldown_seconds: 1 } });
  const open = (page: Page) => openDemo(e2e(), page);
  const post = (action: string, body: object) => postAction(e2e(), action, body);
  const codeLogin = (run: PageRun) => demoCodeLogin(e2e(), run, MARIO_PHONE);

  it('lists the passkey made at 90, renames it, deletes it after asking, and it logs in no more', async () => {
    let deleted: Credential[] = [];
    let deletedId = '';
    await withPage(e2e(), 'passkeys manage walk', async (run) => {
      const { page, context } = run;
      const device = await virtualAuthenticator(context, page);
      await open(page);
      await codeLogin(run);

      // Mario had no passkey: the section says so while the offer is on screen (no second "Crea").
      await page.locator('#passkeys-empty:not([hidden])').waitFor();
      expect(await page.locator('#passkeys-title').innerText()).toBe('Le tue passkey');
      expect(await page.locator('#passkeys-create').isHidden()).toBe(true);
      // The section asked with the proof the code login answered at 90.
      const proof = run.exchanges.find((e) => e.action === 'FeVerifyOtp')?.answer.data.proof as string;
      expect(typeof proof).toBe('string');
      expect(run.exchanges.filter((e) => e.action === 'PasskeyList').map((e) => e.body)).toEqual([{ proof }]);

      // The offer accepted with Enter: the new passkey is listed, with its dates in words.
      expect((await focused(page)).id).toBe('passkey-accept');
      await page.keyboard.press('Enter');
      await page.locator('#status', { hasText: 'Passkey creata' }).waitFor();
      await page.locator('#passkeys-list > li').first().waitFor();
      expect(await rows(page)).toEqual(['Passkey']);
      expect(await page.locator('#passkeys-empty').isHidden()).toBe(true);
      const facts = await page.locator('#passkeys-list > li .passkey-facts').innerText();
      expect(facts).toMatch(
        /^Creata oggi alle \d\d:\d\d, mai usata per accedere; solo sul dispositivo che l’ha creata\.$/,
      );
      deleted = await device.credentials();
      expect(deleted).toHaveLength(1);
      const enrolled = run.exchanges.find((e) => e.action === 'PasskeyEnrol')?.answer.data.passkey as { id: string };
      deletedId = enrolled.id;

      // Rename: Tab to its button, Enter opens the labelled field with the name selected; typing replaces it.
      await tabTo(page, 'Rinomina la passkey «Passkey»');
      await page.keyboard.press('Enter');
      const field = page.getByLabel('Nuovo nome per «Passkey»');
      expect(await field.inputValue()).toBe('Passkey');
      expect((await focused(page)).id).toBe(await field.getAttribute('id'));
      // Escape closes it unchanged, focus back on its button.
      await page.keyboard.press('Escape');
      expect(await field.count()).toBe(0);
      expect((await focused(page)).label).toBe('Rinomina la passkey «Passkey»');
      await page.keyboard.press('Enter');
      // A name of blanks: the service refuses it, the page shows its words and marks the field, focused.
      await page.keyboard.type('   ');
      await page.keyboard.press('Enter');
      await page.locator('#error:not(:empty)').waitFor();
      expect(await page.locator('#error').innerText()).toMatch(/\w/);
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      expect((await focused(page)).id).toBe(await field.getAttribute('id'));
      expect(await rows(page)).toEqual(['Passkey']);
      // The field's text selected on focus: typing replaces it.
      await page.keyboard.type(NEW_NAME);
      await page.keyboard.press('Enter');
      await page.locator('#status', { hasText: `ora si chiama «${NEW_NAME}»` }).waitFor();
      expect(await rows(page)).toEqual([NEW_NAME]);
      expect((await focused(page)).label).toBe(`Rinomina la passkey «${NEW_NAME}»`);
      expect(run.exchanges.filter((e) => e.action === 'PasskeyRename').map((e) => e.body)).toEqual([
        { proof, id: deletedId, name: '' },
        { proof, id: deletedId, name: NEW_NAME },
      ]);
      const listed = await post('PasskeyList', { proof });
      expect((listed.data.passkeys as Array<{ name: string }>).map((p) => p.name)).toEqual([NEW_NAME]);

      // Delete: asks in the page first; Annulla keeps it.
      await page.keyboard.press('Tab');
      expect((await focused(page)).label).toBe(`Elimina la passkey «${NEW_NAME}»`);
      await page.keyboard.press('Enter');
      expect((await focused(page)).text).toMatch(new RegExp(`^Eliminare la passkey «${NEW_NAME}»\\?`));
      await tabTo(page, 'Annulla', 2);
      await page.keyboard.press('Enter');
      expect((await focused(page)).label).toBe(`Rinomina la passkey «${NEW_NAME}»`);
      expect(run.exchanges.filter((e) => e.action === 'PasskeyDelete')).toEqual([]);
      expect(await rows(page)).toEqual([NEW_NAME]);

      // Then confirmed: "Sì, elimina".
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await tabTo(page, 'Sì, elimina', 1);
      await page.keyboard.press('Enter');
      await page.locator('#status', { hasText: `Passkey «${NEW_NAME}» eliminata` }).waitFor();
      expect(await rows(page)).toEqual([]);
      expect(await page.locator('#passkeys-empty').innerText()).toBe(
        'Su questo account non hai nessuna passkey: accedi con un codice.',
      );
      // Nothing left: focus on the list's heading, a new one offered, the cookie gone.
      expect((await focused(page)).id).toBe('passkeys-title');
      expect(await page.locator('#passkeys-create').isVisible()).toBe(true);
      expect((await context.cookies()).map((c) => c.name)).not.toContain('lfa_pk');
      expect((await post('PasskeyList', { proof })).data.passkeys).toEqual([]);
      // The page told the browser (signalUnknownCredential): the authenticator no longer holds it.
      expect(await device.credentials()).toEqual([]);
    });

    // A browser that still holds the deleted passkey (another one, or one without the signal): its next login with it is refused as unknown.
    await withPage(e2e(), 'passkeys manage deleted login', async (run) => {
      const { page, context } = run;
      await virtualAuthenticator(context, page, deleted);
      await open(page);
      await page.locator('#error', { hasText: 'non è più valida' }).waitFor();
      const login = run.exchanges.find((e) => e.action === 'PasskeyLogin');
      expect(login?.answer.data).toMatchObject({ reason: 'passkey_unknown' });
      expect(login?.answer.data.credential_id).toBe(deletedId);
    });
  }, 180_000);

  it('after a decline, offers "Crea una passkey" in the empty list itself, and lists the one made', async () => {
    await withPage(e2e(), 'passkeys manage after decline', async (run) => {
      const { page, context } = run;
      await virtualAuthenticator(context, page);
      await open(page);
      await codeLogin(run);
      // The first test deleted Mario's only passkey: none is listed.
      await page.locator('#passkeys-empty:not([hidden])').waitFor();
      expect((await focused(page)).id).toBe('passkey-accept');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Space');
      await page.locator('#status', { hasText: 'non te lo chiederemo' }).waitFor();
      expect(await page.locator('#passkeys-create').isVisible()).toBe(true);

      await tabTo(page, 'Crea una passkey');
      await page.keyboard.press('Enter');
      await page.locator('#status', { hasText: 'Passkey creata' }).waitFor();
      await page.locator('#passkeys-list > li').first().waitFor();
      expect(await rows(page)).toEqual(['Passkey']);
      expect(await page.locator('#passkeys-create').isHidden()).toBe(true);
      expect((await focused(page)).id).toBe('passkeys-title');
      expect((await context.cookies()).find((c) => c.name === 'lfa_pk')).toMatchObject({ value: '1' });
    });
  }, 120_000);
});
