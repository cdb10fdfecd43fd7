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

/** The record's `to`: addresses separated by a space (neither E.164 nor a canonical mailbox holds one). */
export const addressesOf = (addresses: readonly string[]): string => addresses.join(' ');

const E164 = /^\+[1-9]\d{1,14}$/;
const MAILBOX = /^[^\s@]+@[^\s@]+$/;

/**
 * What a record says it reached: at most one phone and one mailbox. Recipients are canonical
 * before they are recorded, so anything else (a second address of a kind, a token that is
 * neither) means the record cannot say where its code went, and it proves nothing.
 */
export function reachedOf(to: string): Reached {
  const reached: Reached = {};
  for (const address of to.split(' ')) {
    const kind = E164.test(address) ? 'phone' : MAILBOX.test(address) ? 'email' : undefined;
    if (kind === undefined || reached[kind] !== undefined) return {};
    reached[kind] = address;
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
  address.includes('@')
    ? reached.email === address && reached.phone === undefined
    : reached.phone === address && reached.email === undefined;
