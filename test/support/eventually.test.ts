import { eventually } from './eventually';

describe('eventually', () => {
  it('returns the value of the first try that passes, without waiting', async () => {
    const started = Date.now();
    await expect(eventually(() => 'ready', { timeoutMs: 1_000, intervalMs: 500 })).resolves.toBe('ready');
    expect(Date.now() - started).toBeLessThan(400);
  });

  it('retries a failing assertion, sync or async, until it passes', async () => {
    let tries = 0;
    await eventually(() => expect(++tries).toBe(3), { timeoutMs: 1_000, intervalMs: 1 });
    expect(tries).toBe(3);
    let asyncTries = 0;
    await expect(eventually(async () => (++asyncTries < 3 ? Promise.reject(new Error('not yet')) : asyncTries), { timeoutMs: 1_000, intervalMs: 1 })).resolves.toBe(3);
  });

  it('rethrows the last failure as it was once the time is up, after a last try at the deadline', async () => {
    let tries = 0;
    const failure = eventually(
      () => {
        tries += 1;
        throw new Error(`failure ${tries}`);
      },
      { timeoutMs: 60, intervalMs: 25 },
    );
    const thrown = await failure.catch((err: unknown) => err);
    expect(tries).toBeGreaterThanOrEqual(3);
    expect(thrown).toEqual(new Error(`failure ${tries}`));
  });
});
