/*
 * The browser's half of the passkey ceremonies (the service's docs/passkeys.md): the options the
 * service answers go to @simplewebauthn/browser as they are, and the credential it gives back
 * goes to the service as it is. The library is an optional peer of this package: a page that
 * never calls a passkey method never loads it, and one that serves it from its own path (no
 * bundler to resolve the package name) hands it to createJourney. Its types are written here
 * as far as the journey uses them, so that the package is needed by neither this build nor the
 * type check of a project that never installs it.
 */

/** WebAuthn's options as JSON, as @simplewebauthn/server made them and the service answers them. */
type OptionsJSON = object;

/**
 * The two functions of @simplewebauthn/browser the ceremonies use (the module itself will do):
 * each takes the options as JSON and gives the credential as JSON, which the service takes as it is.
 */
export interface WebAuthnBrowser {
  startRegistration(options: { optionsJSON: OptionsJSON }): Promise<{ id: string }>;
  startAuthentication(options: { optionsJSON: OptionsJSON; useBrowserAutofill?: boolean }): Promise<{ id: string }>;
}

/** Where the functions come from: given, or the package, imported on the first ceremony. */
export type WebAuthnSource = WebAuthnBrowser | (() => Promise<WebAuthnBrowser>);

const PACKAGE = '@simplewebauthn/browser';

export function webAuthnLoader(source: WebAuthnSource | undefined): () => Promise<WebAuthnBrowser> {
  // The name in a constant: resolved where it runs, by Node or the page's import map, not by this build.
  if (source === undefined) return () => import(PACKAGE) as Promise<WebAuthnBrowser>;
  return typeof source === 'function' ? source : () => Promise.resolve(source);
}

type SignalUnknown = (options: { rpId: string; credentialId: string }) => Promise<void>;

/**
 * Tells the browser a passkey the service no longer knows (deleted or revoked), so its password
 * manager stops offering it: `PublicKeyCredential.signalUnknownCredential`, where the browser
 * has it. A hint, not a guarantee: whatever it answers, the login goes on as refused.
 */
export async function signalUnknownCredential(rpId: unknown, credentialId: unknown): Promise<boolean> {
  const browser = (globalThis as { PublicKeyCredential?: { signalUnknownCredential?: SignalUnknown } })
    .PublicKeyCredential;
  if (
    typeof browser?.signalUnknownCredential !== 'function' ||
    typeof rpId !== 'string' ||
    typeof credentialId !== 'string'
  )
    return false;
  try {
    // Called on its class: a static method of the browser's, unbound it throws.
    await browser.signalUnknownCredential({ rpId, credentialId });
    return true;
  } catch {
    return false;
  }
}
