import type { IdentityClient } from '../../../src/clients/identity';
import type { OtpService } from '../../../src/domain/otp/service';

export type IdentityCall = [method: keyof IdentityClient, ...args: unknown[]];

/**
 * An identity client answering only the methods given; it records every call (without the
 * context) in order, and any other method fails the test: a sequence that makes a call it
 * should not is caught, not answered.
 */
export function fakeIdentity(answers: Partial<IdentityClient>): { identity: IdentityClient; calls: IdentityCall[] } {
  const calls: IdentityCall[] = [];
  const identity = new Proxy({} as IdentityClient, {
    get: (_target, name) => {
      // Not a method (a symbol, or `then` when something checks for a promise): the client has none.
      if (typeof name !== 'string' || name === 'then') return undefined;
      const method = name as keyof IdentityClient;
      return (ctx: unknown, ...args: unknown[]) => {
        calls.push([method, ...args]);
        const answer = answers[method] as ((...all: unknown[]) => unknown) | undefined;
        if (!answer) throw new Error(`unexpected identity call: ${method}`);
        return answer(ctx, ...args);
      };
    },
  });
  return { identity, calls };
}

/** The OTP service's phone holds over a map (what the account modules use of it); `held` is phone -> uid. */
export function fakeHolds(held: Record<string, string> = {}): { otp: OtpService; held: Record<string, string> } {
  const holds: Pick<OtpService, 'phoneHeldFor' | 'heldPhoneOf' | 'holdPhone' | 'releasePhone'> = {
    phoneHeldFor: async (phone) => held[phone] ?? null,
    heldPhoneOf: async (uid) => Object.keys(held).find((phone) => held[phone] === uid) ?? null,
    holdPhone: async (uid, phone) => void (held[phone] = uid),
    releasePhone: async (uid) => {
      for (const phone of Object.keys(held)) if (held[phone] === uid) delete held[phone];
    },
  };
  return { otp: holds as OtpService, held };
}
