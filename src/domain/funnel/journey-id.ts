import { randomId } from '../../core/random-id';

/*
 * The funnel's anonymous journey id (docs/funnel.md): 12 bytes, base64url (16 characters), made
 * when a journey starts and carried in what the journey already keeps between requests (its
 * signed proofs, and the code record of a screen that hands out no proof). The first 6 bytes
 * are when it started (ms), so every figure of the journey lands in the range where it started
 * and its per-journey state can live on the same Redis Cluster slot as that range's counts; the
 * other 6 are random. Nothing in it comes from a phone, an email, an address or an account.
 */

const ID = /^[A-Za-z0-9_-]{16}$/;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export function newJourneyId(startMs: number): string {
  // The start's 6 bytes are 8 characters of 6 bits each; the random 6 bytes the next 8.
  let ms = Math.max(0, Math.min(Math.floor(startMs), 2 ** 48 - 1));
  let start = '';
  for (let i = 0; i < 8; i += 1) {
    start = BASE64URL[ms % 64]! + start;
    ms = Math.floor(ms / 64);
  }
  return start + randomId(6);
}

export const isJourneyId = (value: unknown): value is string => typeof value === 'string' && ID.test(value);

const SEXTET = new Map([...BASE64URL].map((char, value) => [char.charCodeAt(0), value]));

/**
 * When the journey started (ms since the epoch): its first 6 bytes are its first 8 characters,
 * 6 bits each. Read from the characters, as every counted request reads it, with no buffer made.
 */
export function journeyStart(id: string): number {
  let ms = 0;
  for (let i = 0; i < 8; i += 1) ms = ms * 64 + (SEXTET.get(id.charCodeAt(i)) ?? 0);
  return ms;
}
