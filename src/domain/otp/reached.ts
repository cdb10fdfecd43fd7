/*
 * Where a code went, and so what knowing it proves (docs/security.md): control of the E.164
 * phone its SMS reached and of the email its mail reached, never of the key the caller chose.
 * A code reaches both only when the identity provider shows them on one account (the OTP
 * service checks); knowing it then proves control of *either*, so it verifies the phone (the
 * channel SMS rule 2 is about) and only links the email: it never proves the email itself
 * (no DOI, no claim of an unconfirmed account on the strength of an SMS).
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

/** What knowing a code proves, for a proof: verified identifiers, and identifiers merely linked to them. */
export function provenBy(reached: Reached): { verified: Reached; linked: Reached } {
  if (reached.phone && reached.email) return { verified: { phone: reached.phone }, linked: { email: reached.email } };
  return { verified: reached, linked: {} };
}

/** True when the code went to `address` and nowhere else (a journey's own phone or email). */
export const reachedOnly = (reached: Reached, address: string): boolean =>
  address.includes('@') ? reached.email === address && reached.phone === undefined : reached.phone === address && reached.email === undefined;
