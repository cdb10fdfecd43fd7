/*
 * Where a code went, and so what knowing it proves (docs/security.md): control of the E.164
 * phone its SMS reached and of the email its mail reached, never of the key the caller chose.
 * A code reaches both only when they are one account's (the OTP service checks), so a proof
 * may then name both.
 */

export interface Reached {
  phone?: string;
  email?: string;
}

/** The record's `to`: addresses separated by a space (neither E.164 nor a valid email holds one). */
export const addressesOf = (addresses: readonly string[]): string => addresses.join(' ');

export function reachedOf(to: string): Reached {
  const reached: Reached = {};
  for (const address of to.split(' ')) {
    if (address.startsWith('+')) reached.phone = address;
    else if (address.includes('@')) reached.email = address;
  }
  return reached;
}
