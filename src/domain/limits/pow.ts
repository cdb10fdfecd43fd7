import { createHmac } from 'node:crypto';
import { createChallenge, randomInt, verifySolution, type Challenge, type Solution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { z } from 'zod';
import type { Config } from '../../core/config/schema';

/*
 * The self-hosted proof of work: ALTCHA's protocol (v2) through its own library, so the page's
 * `altcha` widget solves what this issues with no third party. SHA-256 in ALTCHA's
 * deterministic mode: the server draws the counter the solver must reach (between half of
 * the difficulty asked, `challenge.pow_difficulty` raised with the pressure, and all of it) and
 * signs the key it derives, so a solution costs
 * the client that many hashes and the server one hash and two HMACs to check. The challenge's
 * signed `data` names the action and a keyed digest of the identifier it was issued for, and it
 * expires after `challenge.ttl_seconds`.
 */

/** Why a solution given was not taken: said in `data.solution` beside the fresh challenge. */
export type SolutionFault = 'malformed' | 'invalid' | 'expired' | 'spent' | 'mismatch' | 'unverified';

export interface Pow {
  /**
   * A challenge for this action and identifier digest, as the widget takes it (`parameters`,
   * `signature`), at this difficulty (the counter drawn between half of it and it; default
   * `challenge.pow_difficulty`).
   */
  issue(action: string, id: string, difficulty?: number): Promise<Challenge>;
  /**
   * Checks a solution (the widget's payload: base64 of `{ challenge, solution }`) for this action
   * and identifier digest; answers the id to spend it under and until when, or why it fails.
   */
  verify(
    payload: string,
    action: string,
    id: string,
  ): Promise<{ fault: SolutionFault } | { fault?: undefined; id: string; expiresAt: number }>;
}

const ALGORITHM = 'SHA-256';
/** Longest payload taken: a challenge and its solution are under 1 KB. */
const MAX_PAYLOAD = 4096;

interface Payload {
  challenge: Challenge;
  solution: Solution;
}

/** The shape of a payload read before any hashing: what the checks below read must be there, and of its type. */
const PAYLOAD = z.object({
  challenge: z.object({ parameters: z.looseObject({}), signature: z.string() }),
  solution: z.object({ counter: z.number(), derivedKey: z.string() }),
});

function parsePayload(text: string): Payload | undefined {
  if (text.length > MAX_PAYLOAD) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
  } catch {
    // Not base64 JSON: nothing parsed, which the schema refuses below.
  }
  // The payload as sent, not as the schema reads it: ALTCHA checks every field of it.
  return PAYLOAD.safeParse(parsed).success ? (parsed as Payload) : undefined;
}

export function createPow(settings: Config['challenge'], key: Buffer, now: () => number): Pow {
  // Two secrets, as ALTCHA's deterministic mode asks: one signs the challenge, one the derived key.
  const secretOf = (use: string) => createHmac('sha256', key).update(use).digest('hex');
  const secrets = { hmacSignatureSecret: secretOf('pow-challenge'), hmacKeySignatureSecret: secretOf('pow-key') };
  return {
    issue: (action, id, difficulty = settings.pow_difficulty) =>
      createChallenge({
        algorithm: ALGORITHM,
        cost: 1,
        counter: randomInt(difficulty, Math.ceil(difficulty / 2)),
        deriveKey,
        expiresAt: Math.floor(now() / 1000) + settings.ttl_seconds,
        data: { a: action, i: id },
        ...secrets,
      }),
    async verify(text, action, id) {
      const payload = parsePayload(text);
      if (!payload) return { fault: 'malformed' };
      const { data, expiresAt } = payload.challenge.parameters;
      // The binding is read before any hashing; the signature checked next covers it.
      if (!data || data.a !== action || data.i !== id || payload.challenge.parameters.algorithm !== ALGORITHM)
        return { fault: 'mismatch' };
      if (typeof expiresAt !== 'number' || expiresAt * 1000 <= now()) return { fault: 'expired' };
      let result;
      try {
        result = await verifySolution({
          challenge: payload.challenge,
          solution: payload.solution,
          deriveKey,
          ...secrets,
        });
      } catch {
        return { fault: 'malformed' };
      }
      // Reached only when the expiry falls between the check above and ALTCHA's, a few milliseconds on the same clock:
      // Stryker disable next-line ConditionalExpression,ObjectLiteral,StringLiteral: no test can place an expiry there
      if (result.expired) return { fault: 'expired' };
      if (!result.verified) return { fault: 'invalid' };
      return { id: payload.challenge.signature!, expiresAt: expiresAt * 1000 };
    },
  };
}
