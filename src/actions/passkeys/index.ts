import type { Action } from '../action';
import { passkeyEnrol } from './passkey-enrol';
import { passkeyEnrolOptions } from './passkey-enrol-options';
import { passkeyLogin } from './passkey-login';
import { passkeyLoginOptions } from './passkey-login-options';

/** Passkeys beside the codes (docs/passkeys.md): enrolment after a login, and a login without a code. */
export const passkeysActions: Action[] = [
  passkeyEnrolOptions,
  passkeyEnrol,
  passkeyLoginOptions,
  passkeyLogin,
] as Action[];
