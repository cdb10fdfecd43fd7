import type { startAuthentication, startRegistration } from '@simplewebauthn/browser';

/*
 * The browser's half of the passkey ceremonies (the service's docs/passkeys.md): the options the
 * service answers go to @simplewebauthn/browser as they are, and the credential it gives back
 * goes to the service as it is. The library is an optional peer of this package: a page that
 * never calls a passkey method never loads it, and one that serves it from its own path (no
 * bundler to resolve the package name) hands its two functions to createJourney.
 */

/** The two functions of @simplewebauthn/browser the ceremonies use (the module itself will do). */
export interface WebAuthnBrowser {
  startRegistration: typeof startRegistration;
  startAuthentication: typeof startAuthentication;
}

/** Where the functions come from: given, or the package, imported on the first ceremony. */
export type WebAuthnSource = WebAuthnBrowser | (() => Promise<WebAuthnBrowser>);

export function webAuthnLoader(source: WebAuthnSource | undefined): () => Promise<WebAuthnBrowser> {
  if (source === undefined) return () => import('@simplewebauthn/browser');
  return typeof source === 'function' ? source : () => Promise.resolve(source);
}

type SignalUnknown = (options: { rpId: string; credentialId: string }) => Promise<void>;

/**
 * Tells the browser a passkey the service no longer knows (deleted or revoked), so its password
 * manager stops offering it: `PublicKeyCredential.signalUnknownCredential`, where the browser
 * has it. A hint, not a guarantee: whatever it answers, the login goes on as refused.
 */
export async function signalUnknownCredential(rpId: string | undefined, credentialId: unknown): Promise<boolean> {
  const browser = (globalThis as { PublicKeyCredential?: { signalUnknownCredential?: SignalUnknown } })
    .PublicKeyCredential;
  if (typeof browser?.signalUnknownCredential !== 'function' || !rpId || typeof credentialId !== 'string') return false;
  try {
    // Called on its class: a static method of the browser's, unbound it throws.
    await browser.signalUnknownCredential({ rpId, credentialId });
    return true;
  } catch {
    return false;
  }
}
