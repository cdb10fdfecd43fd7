import type { Logger } from '../../core/logger';
import { addInto, type FunnelCounts, type FunnelStore } from './store';

/*
 * Gathers an instance's funnel counts and writes them to the store in one call per
 * `funnel.flush_ms` (one round trip on Redis, whatever the traffic), never on an answer's path.
 * A failed write is logged and its counts are dropped: statistics never fail or slow a login,
 * and a store that is down must not grow this instance's memory.
 */
export interface FunnelTally {
  add(counts: FunnelCounts): void;
  /** Writes what is gathered now (the stats route before it reads, shutdown, tests). */
  flush(): Promise<void>;
  read: FunnelStore['read'];
  close(): Promise<void>;
}

export function createFunnelTally(store: FunnelStore, options: { flushMs: number; now: () => number; log: Logger }): FunnelTally {
  let pending: FunnelCounts = {};
  let empty = true;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (empty) return writing;
    const batch = pending;
    pending = {};
    empty = true;
    // Batches are written in order: a read after flush() sees every one before it.
    writing = writing.then(() =>
      store.add(batch, options.now()).catch((err: unknown) => {
        options.log.warn({ err: { message: err instanceof Error ? err.message : 'error' } }, 'funnel counts not stored');
      }),
    );
    return writing;
  };

  return {
    add(counts) {
      addInto(pending, counts);
      empty = false;
      // unref: a pending flush never keeps a process alive; close() writes it.
      timer ??= setTimeout(() => void flush(), options.flushMs).unref();
    },
    flush,
    read: (fromMs, toMs, nowMs) => flush().then(() => store.read(fromMs, toMs, nowMs)),
    close: flush,
  };
}
