import type { Logger } from '../../core/logger';
import type { FunnelEntry, FunnelStore } from './store';

/*
 * Gathers an instance's funnel entries and writes them to the store once per `funnel.flush_ms`
 * (one write on Redis, whatever the traffic), never on an answer's path. A failed write is
 * logged and its entries are dropped: statistics never fail or slow a login, and a store that is
 * down must not grow this instance's memory.
 */
export interface FunnelTally {
  add(entry: FunnelEntry): void;
  /** Hears the fields each stored entry added (the people newly counted: the Prometheus side of the same count). */
  onStored(listener: (fields: readonly string[]) => void): void;
  /** Writes what is gathered now (the stats route before it reads, shutdown, tests). */
  flush(): Promise<void>;
  read: FunnelStore['read'];
  close(): Promise<void>;
}

export function createFunnelTally(
  store: FunnelStore,
  options: { flushMs: number; now: () => number; log: Logger },
): FunnelTally {
  let pending: FunnelEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  const listeners: Array<(fields: readonly string[]) => void> = [];

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return writing;
    const batch = pending;
    pending = [];
    // Batches are written in order: a read after flush() sees every one before it.
    writing = writing.then(() =>
      store.add(batch, options.now()).then(
        (added) => {
          for (const listener of listeners) for (const fields of added) if (fields.length > 0) listener(fields);
        },
        (err: unknown) => {
          options.log.warn(
            { err: { message: err instanceof Error ? err.message : 'error' } },
            'funnel counts not stored',
          );
        },
      ),
    );
    return writing;
  };

  return {
    add(entry) {
      pending.push(entry);
      // unref: a pending flush never keeps a process alive; close() writes it.
      timer ??= setTimeout(() => void flush(), options.flushMs).unref();
    },
    onStored: (listener) => void listeners.push(listener),
    flush,
    read: (range, nowMs) => flush().then(() => store.read(range, nowMs)),
    close: flush,
  };
}
