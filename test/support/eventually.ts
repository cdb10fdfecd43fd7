/*
 * Waiting for something another process, socket or timer does on its own (a Redis queue
 * delivering, a mail reaching the sandbox outbox, a page showing a code): retry the assertion
 * until it passes, and fail with the assertion's own last failure, never a bare "timed out".
 *
 * Real time only. When time itself is what a test is about (a cooldown, a window, an expiry),
 * inject a clock (`deps.now`, `app.tick`) instead of waiting for it. Not for use under
 * `jest.useFakeTimers()`: the waits between tries would never end.
 */

export interface EventuallyOptions {
  /** How long to keep trying, from the first try; one last try is made at the deadline. Default 5000. */
  timeoutMs?: number;
  /** Pause between a failed try and the next. Default 20. */
  intervalMs?: number;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `assertion` (sync or async) until it returns or resolves, and returns its value. A try
 * that throws or rejects is retried after `intervalMs`; once `timeoutMs` has passed, the last
 * failure is rethrown as it was.
 *
 *   await eventually(() => expect(queue.stats().delivered).toBe(10), { timeoutMs: 8_000, intervalMs: 20 });
 *   const code = await eventually(() => readCode(), { timeoutMs: 2_000, intervalMs: 100 });
 */
export async function eventually<T>(
  assertion: () => T | Promise<T>,
  { timeoutMs = 5_000, intervalMs = 20 }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (failure) {
      const left = deadline - Date.now();
      if (left <= 0) throw failure;
      await pause(Math.min(intervalMs, left));
    }
  }
}
