import { eventually } from './eventually';

/*
 * On Jest's modern fake timers (Date.now and setTimeout both), so that when each try happens is
 * the code's doing, not how busy the machine is.
 */
describe('eventually', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('returns the value of the first try that passes, without waiting', async () => {
    // No timer is advanced: a wait would never end.
    await expect(eventually(() => 'ready', { timeoutMs: 1_000, intervalMs: 500 })).resolves.toBe('ready');
  });

  it('retries a failing assertion, sync or async, until it passes', async () => {
    let tries = 0;
    const sync = eventually(() => expect(++tries).toBe(3), { timeoutMs: 1_000, intervalMs: 1 });
    await jest.advanceTimersByTimeAsync(2);
    await sync;
    expect(tries).toBe(3);
    let asyncTries = 0;
    const later = eventually(async () => (++asyncTries < 3 ? Promise.reject(new Error('not yet')) : asyncTries), {
      timeoutMs: 1_000,
      intervalMs: 1,
    });
    await jest.advanceTimersByTimeAsync(2);
    await expect(later).resolves.toBe(3);
  });

  it('rethrows the last failure as it was once the time is up, after a last try at the deadline', async () => {
    let tries = 0;
    const start = Date.now();
    const failure = eventually(
      () => {
        tries += 1;
        throw new Error(`failure ${tries} at ${Date.now() - start}`);
      },
      { timeoutMs: 60, intervalMs: 25 },
    ).catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(100);
    // Tries at 0, 25 and 50 ms, and the last one at the deadline, 60 ms.
    expect(tries).toBe(4);
    expect(await failure).toEqual(new Error('failure 4 at 60'));
  });
});
