import { randomFillSync } from 'node:crypto';

/*
 * Random ids (proof ids, ledger entry ids, claim tokens), cut from a pool the CSPRNG refills
 * 1.5 KB at a time, as Node's randomUUID does with its own. One randomBytes call per id is one
 * trip into OpenSSL: two of them were ~5% of a code send's CPU (a ledger id and a claim token),
 * as much as its HMACs. The bytes are the CSPRNG's, and each is handed out once.
 */

const POOL_BYTES = 1536;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/** `bytes` random bytes (at most 64), base64url. */
export function randomId(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > 64) throw new RangeError(`randomId: ${bytes} bytes`);
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return id;
}
