import type { IdentityClient } from '../../../src/clients/identity';

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
