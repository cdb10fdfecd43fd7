import type { Action } from '../action';
import { passkeyDelete } from './passkey-delete';
import { passkeyEnrol } from './passkey-enrol';
import { passkeyEnrolOptions } from './passkey-enrol-options';
import { passkeyLogin } from './passkey-login';
import { passkeyList } from './passkey-list';
import { passkeyLoginOptions } from './passkey-login-options';
import { passkeyRename } from './passkey-rename';
import { passkeyRevoke } from './passkey-revoke';

/** Passkeys beside the codes (docs/passkeys.md): enrolment after a login, a login without a code, and managing them. */
export const passkeysActions: Action[] = [
  passkeyEnrolOptions,
  passkeyEnrol,
  passkeyLoginOptions,
  passkeyLogin,
  passkeyList,
  passkeyRename,
  passkeyDelete,
  passkeyRevoke,
] as Action[];
