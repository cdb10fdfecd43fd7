import type { LoginIngestEvent } from '../../clients/collector';

export type { LoginIngestEvent };

/*
 * Login ingest: every token an optimised action issues is posted to the user collector as
 * {uid, accessToken}. The answer to the user never waits for it: `enqueue` returns at once and
 * delivery happens in the background, with bounded retries. This interface is what the flows
 * and the server see, so a durable queue (Redis) can replace the in-memory one without
 * touching them.
 */
export interface LoginIngest {
  /** Queues the event for delivery; never waits for the collector and never rejects. */
  enqueue(event: LoginIngestEvent): Promise<void>;
  /** Events not yet delivered or given up: queued, in flight, or waiting to be retried. */
  pending(): number;
  stats(): IngestStats;
  /** Resolves when nothing is pending (true) or after `timeoutMs` (false). */
  drain(timeoutMs?: number): Promise<boolean>;
  /** Stops accepting events, waits for pending ones within the grace period, then drops the rest (counted and logged). */
  close(): Promise<void>;
}

interface IngestStats {
  queued: number;
  delivered: number;
  /** Failed attempts that were retried. */
  retried: number;
  /** Events given up after the last retry. */
  failed: number;
  /** Events lost without a final attempt: queue full, shut down, or ingest not configured. */
  dropped: number;
  pending: number;
}

/** What the metrics module observes (src/core/metrics.ts): its `ingest` results and the queue depth. */
export interface IngestObserver {
  ingest(result: 'queued' | 'delivered' | 'failed' | 'dropped'): void;
  ingestQueueDepth(depth: number): void;
}
