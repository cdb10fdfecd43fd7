import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { postAction, usePasskeyE2e, virtualAuthenticator } from './passkeys';

/*
 * The passkey ceremonies against a real browser's WebAuthn (docs/passkeys.md): Chromium with a
 * virtual authenticator from the DevTools protocol (ctap2, internal, resident keys, user
 * verification), on the sandbox. The page calls navigator.credentials itself with the options the
 * API answers, so what Chromium builds (its clientDataJSON, its authenticatorData, its
 * attestation) is what the server verifies. A script in the page drives the actions, as a
 * frontend without the typed client would (the demo page's own passkey UI is walked in
 * passkeys-demo.test.ts), at http://localhost (browsers refuse an IP as relying party).
 */

const mario = sandboxSeedUsers[0]!;

/**
 * In the page, plain JavaScript (the tests' TypeScript has no DOM types): base64url to bytes and
 * back, one action posted with the page's cookies, and the two ceremonies as @simplewebauthn/browser
 * would run them: options from the API, navigator.credentials, the credential's JSON back.
 */
const PAGE_SCRIPT = `
  const dec = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
  const enc = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const act = async (action, body) =>
    (await fetch('/?action=' + action, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
  window.enrolPasskey = async (proof) => {
    const { data } = await act('PasskeyEnrolOptions', { proof });
    const o = data.options;
    const made = await navigator.credentials.create({
      publicKey: { ...o, challenge: dec(o.challenge), user: { ...o.user, id: dec(o.user.id) }, excludeCredentials: [] },
    });
    const r = made.response;
    return act('PasskeyEnrol', {
      proof,
      passkey_proof: data.passkey_proof,
      credential: {
        id: made.id, rawId: enc(made.rawId), type: 'public-key', clientExtensionResults: {},
        response: { clientDataJSON: enc(r.clientDataJSON), attestationObject: enc(r.attestationObject), transports: r.getTransports() },
      },
    });
  };
  window.loginWithPasskey = async () => {
    const { data } = await act('PasskeyLoginOptions', {});
    const o = data.options;
    // No credential listed: the authenticator offers the discoverable one it holds for localhost.
    const got = await navigator.credentials.get({ publicKey: { ...o, challenge: dec(o.challenge), allowCredentials: [] } });
    const r = got.response;
    return act('PasskeyLogin', {
      passkey_proof: data.passkey_proof,
      credential: {
        id: got.id, rawId: enc(got.rawId), type: 'public-key', clientExtensionResults: {},
        response: {
          clientDataJSON: enc(r.clientDataJSON), authenticatorData: enc(r.authenticatorData), signature: enc(r.signature),
          ...(r.userHandle ? { userHandle: enc(r.userHandle) } : {}),
        },
      },
    });
  };
`;

type Answer = { data: Record<string, unknown> };
type PageWindow = { enrolPasskey(proof: string): Promise<Answer>; loginWithPasskey(): Promise<Answer> };

describe('passkeys in Chromium with a virtual authenticator', () => {
  const e2e = usePasskeyE2e();
  const post = async (action: string, body: object) => (await postAction(e2e(), action, body)).data;

  it('enrols a passkey after an SMS login, then logs in with it and no SMS', async () => {
    const { service, browser, origin } = e2e();
    // The code login, as any client does it: its answer at 90 carries the proof enrolment needs.
    await post('FeLogin', { identifier: '+393331234567' });
    const code = service.sandbox!.outbox.list('sms').find((m) => m.to.includes('393331234567'))!.code;
    const logged = await post('FeVerifyOtp', { flow: 'phone', phone: '+393331234567', otp_code: code });
    expect(logged).toMatchObject({ next_step: 90, uid: mario.uid });
    const smsBefore = service.sandbox!.outbox.list('sms').length;

    const context = await browser.newContext();
    const page = await context.newPage();
    // A page of the origin that asks no passkey itself (the demo's autofill would hold the one request allowed).
    await page.goto(`${origin}/flows`);
    await virtualAuthenticator(context, page);
    await page.evaluate(PAGE_SCRIPT);

    const enrolled = await page.evaluate(
      (proof) => (globalThis as unknown as PageWindow).enrolPasskey(proof),
      logged.proof as string,
    );
    expect(enrolled.data.passkey).toMatchObject({ name: 'Passkey', id: expect.any(String) });

    const login = await page.evaluate(() => (globalThis as unknown as PageWindow).loginWithPasskey());
    expect(login.data).toMatchObject({ next_step: 90, done: true, uid: mario.uid, access_token: expect.any(String) });
    // The browser holds the token cookie, as after a code login.
    expect((await context.cookies()).map((c) => c.name)).toContain('__utp');
    expect(service.sandbox!.outbox.list('sms')).toHaveLength(smsBefore);
    await context.close();
  });
});
