import type { Page } from 'playwright-core';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { type Exchange, codeFromOutbox, useE2e, withPage } from './harness';

/*
 * The reference login page (GET /demo) in headless Chromium against the service on the sandbox:
 * a person's journeys through the optimised actions, codes read from the outbox the page links
 * to. A short resend cooldown (3 s) keeps the countdown test quick.
 */

const mario = sandboxSeedUsers[0]!;
const giulia = sandboxSeedUsers[1]!;
const COOLDOWN_SECONDS = 3;
const TEST_TIMEOUT = 30_000;

const e2e = useE2e({ otp: { resend_cooldown_seconds: COOLDOWN_SECONDS } });

async function open(page: Page): Promise<void> {
  await page.goto(`${e2e().service.url}/demo`);
  await page.locator('body[data-ready="true"]').waitFor();
}

const stepNumber = (page: Page) => page.locator('#step-number').innerText();
/** The machine state of the screen the step panel marks current (each screen once, named in Italian). */
const currentState = async (page: Page) =>
  (await page.locator('#diagram [aria-current="step"]').getAttribute('data-state')) ?? '';
const currentScreen = (page: Page) => page.locator('#diagram [aria-current="step"] .name').innerText();
const focusedId = (page: Page) => page.evaluate<string>('document.activeElement ? document.activeElement.id : ""');
/** The ids of the page's inputs that no label names (`input.labels` is empty). */
const unlabelledInputs = (page: Page) =>
  page
    .locator('input')
    .evaluateAll((inputs) =>
      (inputs as unknown as Array<{ id: string; labels: ArrayLike<unknown> }>)
        .filter((i) => i.labels.length === 0)
        .map((i) => i.id),
    );
const visibleView = (page: Page) => page.locator('.view:not([hidden])').getAttribute('data-view');

/** Waits until the page shows `step` (the API answered), then checks the diagram highlights `state`. */
async function expectStep(page: Page, step: string, state: string): Promise<void> {
  await page.locator('#step-number', { hasText: new RegExp(`^${step}$`) }).waitFor();
  expect(await currentState(page)).toBe(state);
}

const sent = (exchanges: Exchange[], action: string, index = 0) => exchanges.filter((x) => x.action === action)[index]!;

describe('the reference login page', () => {
  it(
    'logs the seeded user in by phone with the keyboard only: 14, code from the outbox, 90',
    async () => {
      await withPage(e2e(), 'phone login of an existing user', async (run) => {
        const { page } = run;
        await open(page);
        expect(await focusedId(page)).toBe('identifier');
        expect(await currentState(page)).toBe('enteringIdentifier');
        expect(await currentScreen(page)).toBe('Accedi o registrati');

        await page.keyboard.type('+39 333 123 4567');
        await page.keyboard.press('Enter');
        await expectStep(page, '14', 'awaitingPhoneCode');
        // The panel speaks the journey diagrams' words: the screen, the journeys it belongs to, the actions on.
        expect(await currentScreen(page)).toBe('Inserisci il codice SMS');
        // The passkey enrolment starts with a phone login too (then 102, 103): it is possible here as well.
        expect(await page.locator('#journey-current').innerText()).toBe(
          'Percorsi possibili: Accesso con il telefono · Registrazione con il telefono · Passkey creata dopo un accesso con il telefono',
        );
        expect(await page.locator('#journeys li.possible').allInnerTexts()).toEqual([
          'Accesso con il telefono',
          'Registrazione con il telefono',
          'Passkey creata dopo un accesso con il telefono',
        ]);
        expect(await page.locator('#transitions li strong').allInnerTexts()).toEqual([
          'invia il codice',
          'invia il codice',
        ]);
        expect(await focusedId(page)).toBe('otp-code');
        expect(await page.locator('#code-sent').innerText()).toContain('+39 333 123 4567');

        const code = await codeFromOutbox(run, 'sms', '+393331234567');
        await page.keyboard.type(code);
        await page.keyboard.press('Enter');
        await expectStep(page, '90', 'loggedIn');
        expect(await page.locator('#journey-current').innerText()).toBe(
          'Percorsi possibili: Accesso con il telefono · Passkey creata dopo un accesso con il telefono',
        );
        // Every step is listed once.
        const badges = (await page.locator('#diagram .badge').allInnerTexts()).filter((b) => b !== '');
        expect(new Set(badges).size).toBe(badges.length);
        expect(await visibleView(page)).toBe('success');
        expect(await page.locator('#success-uid').innerText()).toBe(mario.uid);
        expect(await page.locator('#error').innerText()).toBe('');
        expect((await run.context.cookies()).find((c) => c.name === '__utp')?.value).toBe(
          sent(run.exchanges, 'FeVerifyOtp').answer.data.access_token,
        );
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'registers by email, adds a phone, completes the profile, sending each answer’s proof on',
    async () => {
      await withPage(e2e(), 'email registration then add phone then profile', async (run) => {
        const { page, exchanges } = run;
        const email = 'sara.e2e@example.com';
        await open(page);
        await page.getByRole('button', { name: "Registrati con l'email" }).click();
        expect(await currentState(page)).toBe('enteringRegistrationEmail');
        expect(await focusedId(page)).toBe('register-email');

        await page.keyboard.type(email);
        await page.keyboard.press('Enter');
        await expectStep(page, '23', 'awaitingRegistrationEmailCode');
        // The panel names the journey the person chose, from the first screen to the last.
        const chosen = "Percorso: Registrazione da «Registrati con l'email»";
        expect(await page.locator('#journey-current').innerText()).toBe(chosen);
        await page.keyboard.type(await codeFromOutbox(run, 'email', email));
        await page.keyboard.press('Enter');

        await expectStep(page, '37', 'fillingEmailRegistrationForm');
        expect(await focusedId(page)).toBe('reg-first-name');
        expect(await unlabelledInputs(page)).toEqual([]);
        await page.keyboard.type('Sara');
        await page.keyboard.press('Tab');
        await page.keyboard.type('Neri');
        await page.getByLabel('Accetto i termini e le condizioni (obbligatorio)').check();
        await page.locator('#reg-last-name').press('Enter');

        await expectStep(page, '90', 'loggedIn');
        await page.getByRole('button', { name: 'Aggiungi un telefono' }).click();
        expect(await focusedId(page)).toBe('add-phone');
        await page.keyboard.type('+39 333 777 0808');
        await page.keyboard.press('Enter');
        await expectStep(page, '62', 'awaitingNewPhoneCode');
        expect(await page.locator('#journey-current').innerText()).toBe(chosen);
        await page.keyboard.type(await codeFromOutbox(run, 'sms', '+393337770808'));
        await page.keyboard.press('Enter');

        await expectStep(page, '90', 'loggedIn');
        // A phone added after the registration is not another journey: the label stays the one chosen.
        expect(await page.locator('#journey-current').innerText()).toBe(chosen);
        expect(await page.getByRole('button', { name: 'Aggiungi un telefono' }).isHidden()).toBe(true);
        await page.getByRole('button', { name: 'Completa il profilo' }).click();
        expect(await page.locator('#profile-otp-phone').inputValue()).toBe('+39 333 777 0808');
        await page.locator('#profile-city').fill('Bologna');
        await page.locator('#profile-birth-date').fill('1992-06-15');
        await page.locator('#profile-city').press('Enter');
        await page.locator('#success-title', { hasText: 'Profilo salvato' }).waitFor();
        expect(await stepNumber(page)).toBe('90');

        // Each request carried the proof the previous answer handed out, in the field docs/flows-http.md names.
        const emailOtp = sent(exchanges, 'FeRegister', 0);
        const emailVerified = sent(exchanges, 'FeVerifyOtp', 0);
        const registered = sent(exchanges, 'FeRegister', 1);
        const added = sent(exchanges, 'FeAddPhone');
        const phoneVerified = sent(exchanges, 'FeVerifyOtp', 1);
        const profile = sent(exchanges, 'FeUpdateProfile');
        expect(emailVerified.body).toMatchObject({
          flow: 'email_register',
          email,
          pending_proof: emailOtp.answer.data.pending_proof,
        });
        expect(registered.body).toMatchObject({
          phase: 'register',
          email,
          register_proof: emailVerified.answer.data.register_proof,
          consents: { terms_conditions: true },
        });
        expect(added.body).toMatchObject({
          flow: 'email_register_phone',
          uid: registered.answer.data.uid,
          proof: registered.answer.data.proof,
        });
        expect(phoneVerified.body).toMatchObject({
          flow: 'email_register_phone',
          pending_proof: added.answer.data.pending_proof,
        });
        expect(profile.body).toMatchObject({
          uid: registered.answer.data.uid,
          city: 'Bologna',
          birth_date: '1992-06-15',
          proof: phoneVerified.answer.data.proof,
        });
        expect(profile.answer.data).toMatchObject({ next_step: 90, done: true, screen: 'success' });
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'shows a wrong code’s error text as the API gives it, in the page’s language even to an English browser, in a live region, and stays on the step',
    async () => {
      await withPage(
        e2e(),
        'wrong code',
        async (run) => {
          const { page } = run;
          await open(page);
          await page.keyboard.type(giulia.email);
          await page.keyboard.press('Enter');
          await expectStep(page, '33', 'awaitingEmailCode');

          await page.keyboard.type('000000');
          await page.keyboard.press('Enter');
          const error = page.locator('#error');
          await error.filter({ hasText: /./ }).waitFor();
          expect(await error.innerText()).toBe('OTP non valido.');
          expect(await error.getAttribute('aria-live')).toBe('assertive');
          expect(await stepNumber(page)).toBe('33');
          expect(await focusedId(page)).toBe('otp-code');
          expect(await page.locator('#otp-code').getAttribute('aria-invalid')).toBe('true');
        },
        { locale: 'en-US' },
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'counts the resend cooldown down with the button disabled, then sends a new code',
    async () => {
      await withPage(e2e(), 'resend countdown', async (run) => {
        const { page } = run;
        const resend = page.locator('#resend');
        const seconds = page.locator('#resend-seconds');
        await open(page);
        await page.keyboard.type('+39 333 000 4444');
        await page.keyboard.press('Enter');
        await expectStep(page, '14', 'awaitingPhoneCode');
        const shownAt = Date.now();

        expect(await page.locator('#resend-wait').isVisible()).toBe(true);
        expect(await seconds.innerText()).toBe(String(COOLDOWN_SECONDS));
        expect(await resend.isDisabled()).toBe(true);
        await page.locator('#resend-seconds', { hasText: new RegExp(`^${COOLDOWN_SECONDS - 1}$`) }).waitFor();
        expect(await resend.isDisabled()).toBe(true);

        await page.locator('#resend:enabled').waitFor({ timeout: (COOLDOWN_SECONDS + 2) * 1000 });
        expect(Date.now() - shownAt).toBeGreaterThanOrEqual((COOLDOWN_SECONDS - 0.5) * 1000);
        expect(await page.locator('#resend-wait').isHidden()).toBe(true);

        await resend.click();
        await page.locator('#status', { hasText: 'Nuovo codice inviato.' }).waitFor();
        expect(await resend.isDisabled()).toBe(true);
        const code = await codeFromOutbox(run, 'sms', '+393330004444', 1);
        await page.locator('#otp-code').fill(code);
        await page.keyboard.press('Enter');
        await expectStep(page, '24', 'askingRegistrationEmail');
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'offers the phone on file at 65 to an account whose email was never confirmed: the code keeps it (90), «Non è il mio numero» drops it (61)',
    async () => {
      await withPage(e2e(), 'step 65, both choices', async (run) => {
        const { page } = run;
        const [elena, francesca] = [sandboxSeedUsers[3]!, sandboxSeedUsers[4]!];
        await open(page);
        await page.keyboard.type(elena.email);
        await page.keyboard.press('Enter');
        await expectStep(page, '33', 'awaitingEmailCode');
        await page.keyboard.type(await codeFromOutbox(run, 'email', elena.email));
        await page.keyboard.press('Enter');
        await expectStep(page, '65', 'awaitingPhoneOnFileCode');
        expect(await currentScreen(page)).toBe('Conferma il telefono dell’account');
        expect(await page.locator('#code-sent').innerText()).toContain('+39 *******606');
        expect(await page.locator('#resend').isHidden()).toBe(true);
        expect(await page.locator('#decline-phone').isVisible()).toBe(true);
        expect(await focusedId(page)).toBe('otp-code');
        await page.keyboard.type(await codeFromOutbox(run, 'sms', '+393336660606'));
        await page.keyboard.press('Enter');
        await expectStep(page, '90', 'loggedIn');
        expect(await page.locator('#success-uid').innerText()).toBe(elena.uid);

        await page.locator('#restart').click();
        await page.locator('#identifier').fill(francesca.email);
        await page.keyboard.press('Enter');
        await expectStep(page, '33', 'awaitingEmailCode');
        await page.keyboard.type(await codeFromOutbox(run, 'email', francesca.email));
        await page.keyboard.press('Enter');
        await expectStep(page, '65', 'awaitingPhoneOnFileCode');
        expect(await page.locator('#code-sent').innerText()).toContain('+39 *******707');
        // The keyboard reaches the second choice: the code field, Verifica, then «Non è il mio numero».
        await page.keyboard.press('Tab');
        await page.keyboard.press('Tab');
        expect(await focusedId(page)).toBe('decline-phone');
        await page.keyboard.press('Enter');
        await expectStep(page, '61', 'askingPhone');
        expect(sent(run.exchanges, 'FeVerifyOtp', 3).body).toMatchObject({
          flow: 'email_phone_declined',
          pending_proof: expect.any(String),
        });
        expect(sent(run.exchanges, 'FeVerifyOtp', 3).body).not.toHaveProperty('otp_code');
      });
    },
    TEST_TIMEOUT,
  );
});
