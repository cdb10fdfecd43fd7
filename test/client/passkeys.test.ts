import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import {
  createClient,
  createJourney,
  signalUnknownCredential,
  type Client,
  type WebAuthnBrowser,
} from '../../client/src';
import type { Deps } from '../../src/domain/deps';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { testApp, testConfig, testDeps } from '../support/app';
import { SoftAuthenticator } from '../support/soft-authenticator';

/*
 * The journey's passkey methods against the real app over HTTP, on the sandbox with passkeys on:
 * @simplewebauthn/browser's two functions are replaced by a software authenticator that answers
 * the options the service gave with real WebAuthn payloads, so what the journey sends is what
 * the service verifies. The package itself is mocked where the journey imports it by default.
 */

const startRegistration = jest.fn();
const startAuthentication = jest.fn();
jest.mock('@simplewebauthn/browser', () => ({ startRegistration, startAuthentication }));

const mario = sandboxSeedUsers[0]!;
const MARIO_PHONE = '+393331234567';
const ORIGIN = 'http://localhost:8080';

let sandbox: Sandbox;
let deps: Deps;
let server: Server;
let client: Client;
const auth = new SoftAuthenticator(ORIGIN);
/** The functions the journey is given: the software authenticator, recording what they were asked. */
const asked: Array<{ ceremony: string; autofill?: boolean }> = [];
const webauthn: WebAuthnBrowser = {
  startRegistration: async ({ optionsJSON }) => {
    asked.push({ ceremony: 'create' });
    return auth.register(optionsJSON as never) as never;
  },
  startAuthentication: async ({ optionsJSON, useBrowserAutofill }) => {
    asked.push({ ceremony: 'get', autofill: useBrowserAutofill });
    return auth.assert(optionsJSON as never) as never;
  },
};
// The package's own module is what the journey takes (the demo page hands it over).
const packageFits: (module: typeof import('@simplewebauthn/browser')) => WebAuthnBrowser = (module) => module;

beforeAll(async () => {
  sandbox = await startSandbox(
    testConfig({ passkeys: { enabled: true, rp_id: 'localhost', origins: [ORIGIN] } }),
    pino({ level: 'silent' }),
  );
  deps = testDeps(sandbox.config);
  server = testApp(deps).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  // The embedded database opens on the first passkey request, migrations and all: here, not in a test's time.
  await client.PasskeyLoginOptions({});
}, 120_000);
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await deps.close();
  await sandbox.close();
});
afterEach(() => {
  delete (globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential;
});

/** A journey logged in by SMS code: at 90 with its proof. */
async function codeLogin(options: Parameters<typeof createJourney>[1] = { webauthn }) {
  const journey = createJourney(client, options);
  await journey.login({ identifier: MARIO_PHONE });
  const code = sandbox.outbox.list('sms').find((m) => m.to.includes(MARIO_PHONE))!.code!;
  expect(await journey.verifyOtp({ otp_code: code })).toMatchObject({ success: true, data: { next_step: 90 } });
  return journey;
}

describe('the journey with passkeys', () => {
  let enrolledId: string;

  it('enrols a passkey after a code login, with the proof of its 90', async () => {
    const journey = await codeLogin();
    const enrolled = await journey.enrolPasskey({ name: 'Il mio telefono' });
    expect(enrolled).toMatchObject({ success: true, data: { passkey: { name: 'Il mio telefono' } } });
    enrolledId = (enrolled as { data: { passkey: { id: string } } }).data.passkey.id;
    expect(asked.at(-1)).toEqual({ ceremony: 'create' });
    // The login is still at 90, its proof unspent: the profile can follow.
    expect(journey.state).toMatchObject({ step: 90, uid: mario.uid, proofs: { proof: expect.any(String) } });
  });

  it('logs in with it, by autofill: a fresh journey at 90 with uid and proof, and no SMS', async () => {
    const sms = sandbox.outbox.list('sms').length;
    const journey = createJourney(client, { webauthn });
    const login = await journey.loginWithPasskey({ autofill: true });
    expect(login).toMatchObject({
      success: true,
      data: { next_step: 90, done: true, uid: mario.uid, access_token: expect.any(String) },
    });
    expect(asked.at(-1)).toEqual({ ceremony: 'get', autofill: true });
    expect(journey.state).toMatchObject({
      step: 90,
      done: true,
      flow: null,
      uid: mario.uid,
      proofs: { proof: expect.any(String) },
    });
    expect(sandbox.outbox.list('sms')).toHaveLength(sms);
  });

  it('asks the browser without autofill unless told, and the proof it gets enrols another', async () => {
    const journey = createJourney(client, { webauthn });
    expect(await journey.loginWithPasskey()).toMatchObject({ success: true });
    expect(asked.at(-1)).toEqual({ ceremony: 'get', autofill: false });
    expect(await journey.enrolPasskey()).toMatchObject({ success: true, data: { passkey: { name: 'Passkey' } } });
  });

  it('imports @simplewebauthn/browser itself when not given the functions', async () => {
    expect(packageFits({ startRegistration, startAuthentication } as never)).toBeDefined();
    startAuthentication.mockImplementation(async ({ optionsJSON }) => auth.assert(optionsJSON));
    const journey = createJourney(client);
    expect(await journey.loginWithPasskey()).toMatchObject({ success: true, data: { uid: mario.uid } });
    expect(startAuthentication).toHaveBeenCalledWith(expect.objectContaining({ useBrowserAutofill: false }));
  });

  it('takes a loader, called on the first ceremony', async () => {
    const load = jest.fn(async () => webauthn);
    const journey = createJourney(client, { webauthn: load });
    expect(load).not.toHaveBeenCalled();
    expect(await journey.loginWithPasskey()).toMatchObject({ success: true });
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('refuses to enrol before a login reached 90, asking nothing', async () => {
    const journey = createJourney(client, { webauthn });
    const before = asked.length;
    await expect(journey.enrolPasskey()).rejects.toThrow(/after a login answered 90/);
    expect(asked).toHaveLength(before);
  });

  it('lets the browser cancellation through and leaves the journey as it was', async () => {
    const journey = await codeLogin({
      webauthn: {
        ...webauthn,
        startRegistration: async () => {
          throw Object.assign(new Error('The operation either timed out or was not allowed.'), {
            name: 'NotAllowedError',
          });
        },
      },
    });
    const state = journey.state;
    await expect(journey.enrolPasskey()).rejects.toMatchObject({ name: 'NotAllowedError' });
    expect(journey.state).toBe(state);
  });

  it('a deleted passkey answers passkey_unknown, the browser is told, and the journey does not move', async () => {
    const signals: unknown[] = [];
    (globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential = {
      signalUnknownCredential: async function (this: unknown, options: unknown) {
        // A static method: called on its class, as the browser requires.
        expect(this).toBe((globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential);
        signals.push(options);
      },
    };
    const owner = await codeLogin();
    const deleted = await client.PasskeyDelete({ proof: owner.state.proofs.proof!, id: enrolledId });
    expect(deleted).toMatchObject({ success: true });

    const journey = createJourney(client, { webauthn });
    const refused = await journey.loginWithPasskey();
    expect(refused).toMatchObject({ success: false, data: { reason: 'passkey_unknown' } });
    expect(signals).toEqual([{ rpId: 'localhost', credentialId: enrolledId }]);
    expect(journey.state).toMatchObject({ step: null, uid: null, proofs: {} });
  });

  it('signalUnknownCredential, for a frontend that deletes: told where the browser has it, false where it cannot be', async () => {
    const global = globalThis as { PublicKeyCredential?: unknown };
    // No WebAuthn at all (an old browser, Node): nothing to tell.
    expect(await signalUnknownCredential('localhost', 'AAAA')).toBe(false);
    global.PublicKeyCredential = {};
    expect(await signalUnknownCredential('localhost', 'AAAA')).toBe(false);
    const signals: unknown[] = [];
    global.PublicKeyCredential = {
      signalUnknownCredential: async function (this: unknown, options: unknown) {
        expect(this).toBe(global.PublicKeyCredential);
        signals.push(options);
      },
    };
    expect(await signalUnknownCredential('localhost', 'AAAA')).toBe(true);
    // No relying party known (passkeys off: the demo's setup says null), or no id: not asked.
    expect(await signalUnknownCredential(null, 'AAAA')).toBe(false);
    expect(await signalUnknownCredential('localhost', undefined)).toBe(false);
    expect(signals).toEqual([{ rpId: 'localhost', credentialId: 'AAAA' }]);
    // A browser that refuses (an rpId not of this origin: SecurityError) is a hint not taken, not a failure.
    global.PublicKeyCredential = {
      signalUnknownCredential: async () => {
        throw Object.assign(new Error('The relying party ID is not a registrable domain suffix'), {
          name: 'SecurityError',
        });
      },
    };
    expect(await signalUnknownCredential('example.com', 'AAAA')).toBe(false);
  });

  it('answers passkeys_disabled where passkeys are off, before asking the browser', async () => {
    const off = await startSandbox(testConfig(), pino({ level: 'silent' }));
    const offDeps = testDeps(off.config);
    const offServer = testApp(offDeps).listen(0, '127.0.0.1');
    await new Promise((resolve) => offServer.once('listening', resolve));
    try {
      const before = asked.length;
      const journey = createJourney(
        createClient({ baseUrl: `http://127.0.0.1:${(offServer.address() as AddressInfo).port}` }),
        { webauthn },
      );
      expect(await journey.loginWithPasskey({ autofill: true })).toMatchObject({
        success: false,
        data: { reason: 'passkeys_disabled' },
      });
      expect(asked).toHaveLength(before);
    } finally {
      offServer.closeAllConnections();
      await new Promise((resolve) => offServer.close(resolve));
      await offDeps.close();
      await off.close();
    }
  });
});
