/*
 * Callers waiting for a queue to empty (`drain`), each until a deadline: both ingest queues wait
 * the same way and differ only in when they know they are idle.
 */
export interface IdleWaiters {
  /** Resolves true when `wakeAll` runs, false once `timeoutMs` has passed (never, by default). */
  wait(timeoutMs?: number): Promise<boolean>;
  /** Resolves every wait: the queue is idle. */
  wakeAll(): void;
  /** Whether anyone waits (an idle check costs a Redis round trip; skipped when no one does). */
  readonly waiting: boolean;
}

export function createIdleWaiters(): IdleWaiters {
  const waiters = new Set<() => void>();
  return {
    wait: (timeoutMs = Infinity) =>
      new Promise((resolve) => {
        let deadline: NodeJS.Timeout | undefined;
        const wake = () => {
          if (deadline) clearTimeout(deadline);
          resolve(true);
        };
        waiters.add(wake);
        if (Number.isFinite(timeoutMs)) {
          deadline = setTimeout(() => {
            waiters.delete(wake);
            resolve(false);
          }, timeoutMs);
          deadline.unref();
        }
      }),
    wakeAll() {
      for (const wake of waiters) wake();
      waiters.clear();
    },
    get waiting() {
      return waiters.size > 0;
    },
  };
}
