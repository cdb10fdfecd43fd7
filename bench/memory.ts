import { createOtpHasher, generateCode } from '../src/domain/otp/code';
import { createMemoryOtpStore } from '../src/domain/otp/memory-store';
import { announce, serve } from './child';
import { phoneOf } from './phones';
import { randomId } from '../src/core/random-id';

/*
 * Memory per pending code in the memory OTP store: the V8 heap after a full GC, before and
 * after storing `records` codes under distinct E.164 keys (what otp_generate stores: the key
 * and the keyed hash of a fresh random code, with the default policy). Runs in its own process
 * with --expose-gc so nothing else lives in that heap. The store stays referenced until the
 * second measurement.
 */

export interface MemoryResult {
  records: number;
  heapBytes: number;
  bytesPerRecord: number;
  /** Resident set growth per record, for comparison (includes allocator slack). */
  rssBytesPerRecord: number;
  /**
   * A passkey challenge: nothing while pending (its `passkey_proof` carries it); once answered,
   * its proof id is held as spent until the proof expires, what this counts per challenge.
   * Absent in a build without passkeys.
   */
  bytesPerSpentChallenge?: number;
}

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc');
  // Twice: the first pass may only promote what the second frees.
  collect();
  collect();
};

async function measureMemory(records: number): Promise<MemoryResult> {
  const hash = createOtpHasher('bench-secret-bench-secret-bench-secret!');
  const policy = { ttlMs: 300_000, cooldownMs: 60_000, maxAttempts: 5 };
  const now = Date.now();
  // Keys and hashes made before the first measurement would be counted as "before"; making
  // them inside the loop counts exactly what the store keeps of them.
  const store = createMemoryOtpStore({ maxRecords: records + 1 });
  gc();
  const before = process.memoryUsage();
  for (let i = 0; i < records; i++) {
    const key = phoneOf('+3938', i);
    await store.issue(key, hash(key, generateCode(6)), now, policy);
  }
  gc();
  const after = process.memoryUsage();
  const heapBytes = after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers);
  const result = {
    records,
    heapBytes,
    bytesPerRecord: heapBytes / records,
    rssBytesPerRecord: (after.rss - before.rss) / records,
  };
  await store.close();
  return { ...result, bytesPerSpentChallenge: await measureSpentChallenges(records) };
}

/** What the code store keeps per answered passkey challenge: its proof id, spent until the proof expires. */
async function measureSpentChallenges(records: number): Promise<number> {
  const ttlMs = 300_000;
  const store = createMemoryOtpStore({ maxRecords: records + 1 });
  gc();
  const before = process.memoryUsage();
  // The id as proofs mint it (src/domain/proofs.ts), made inside the loop so only what is kept counts.
  for (let i = 0; i < records; i++) await store.spendProof(randomId(12), Date.now() + ttlMs);
  gc();
  const after = process.memoryUsage();
  await store.close();
  return (after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers)) / records;
}

if (require.main === module) {
  serve(async (command) => {
    if (command.type === 'measure') return measureMemory(Number(command.records));
    throw new Error(`unknown command ${String(command.type)}`);
  });
  announce({ pid: process.pid });
}
