import { randomId } from '../../src/core/random-id';

/*
 * Random ids come from a pool the CSPRNG refills in blocks (src/core/random-id.ts): every id
 * distinct, of its length, and the CSPRNG asked once per block, not once per id.
 */

const calls = { fill: 0 };
jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return {
    ...actual,
    randomFillSync: (...args: Parameters<typeof actual.randomFillSync>) => (
      calls.fill++,
      actual.randomFillSync(...args)
    ),
  };
});

describe('randomId', () => {
  it('answers distinct base64url ids of the bytes asked for', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const id = randomId(i % 2 === 0 ? 12 : 9);
      expect(id).toMatch(i % 2 === 0 ? /^[A-Za-z0-9_-]{16}$/ : /^[A-Za-z0-9_-]{12}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(10_000);
  });

  it('asks the CSPRNG once per 1.5 KB of ids, not once per id', () => {
    calls.fill = 0;
    for (let i = 0; i < 1280; i++) randomId(12);
    // 15,360 bytes: ten blocks of 1,536 (one more when the pool was part used before).
    expect(calls.fill).toBeGreaterThanOrEqual(10);
    expect(calls.fill).toBeLessThanOrEqual(11);
  });

  it('refuses a size it cannot cut from the pool', () => {
    for (const bytes of [0, -1, 65, 1.5]) expect(() => randomId(bytes)).toThrow(RangeError);
  });
});
