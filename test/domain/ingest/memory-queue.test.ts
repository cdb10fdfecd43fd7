import nock from 'nock';
import pino from 'pino';
import { createCollectorClient } from '../../../src/clients/collector';
import {
  createLoginIngest,
  createMemoryLoginIngest,
  type IngestObserver,
  type LoginIngestEvent,
} from '../../../src/domain/ingest';
import { testConfig } from '../../support/app';
import { eventually } from '../../support/eventually';
import { useNock } from '../../support/nock';

const event: LoginIngestEvent = { uid: 'uid-1', accessToken: 'secret-access-token-value' };

/** A logger whose lines the test can read. */
function capturingLog() {
  const lines: string[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
  return { log, lines };
}

const noDelay = () => 1;

describe('in-memory login ingest', () => {
  it('returns at once while the delivery is still running', async () => {
    let release!: () => void;
    const deliver = jest.fn(() => new Promise<void>((resolve) => (release = resolve)));
    const ingest = createMemoryLoginIngest({ deliver, log: pino({ level: 'silent' }), maxRetries: 0 });
    await ingest.enqueue(event);
    expect(deliver).toHaveBeenCalledWith(event);
    expect(ingest.pending()).toBe(1);
    release();
    await expect(ingest.drain(1000)).resolves.toBe(true);
    expect(ingest.stats()).toMatchObject({ queued: 1, delivered: 1, pending: 0 });
  });

  it('retries a failed delivery with backoff, then succeeds', async () => {
    const deliver = jest
      .fn()
      .mockRejectedValueOnce(new Error('down'))
      .mockRejectedValueOnce(new Error('down'))
      .mockResolvedValue(undefined);
    const backoff = jest.fn(noDelay);
    const ingest = createMemoryLoginIngest({
      deliver,
      log: pino({ level: 'silent' }),
      maxRetries: 3,
      backoffMs: backoff,
    });
    await ingest.enqueue(event);
    await ingest.drain(1000);
    expect(deliver).toHaveBeenCalledTimes(3);
    expect(backoff.mock.calls).toEqual([[1], [2]]);
    expect(ingest.stats()).toMatchObject({ delivered: 1, retried: 2, failed: 0 });
  });

  it('counts and logs an event given up after the last retry, without its token', async () => {
    const { log, lines } = capturingLog();
    const deliver = jest.fn().mockRejectedValue(new Error('down'));
    const ingest = createMemoryLoginIngest({ deliver, log, maxRetries: 2, backoffMs: noDelay });
    await ingest.enqueue(event);
    await ingest.drain(1000);
    expect(deliver).toHaveBeenCalledTimes(3);
    expect(ingest.stats()).toMatchObject({ delivered: 0, retried: 2, failed: 1, pending: 0 });
    const givenUp = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'login ingest failed: event given up');
    expect(givenUp).toMatchObject({ uid: 'uid-1', attempts: 3, level: 40 });
    expect(lines.join('\n')).not.toContain('secret-access-token-value');
  });

  it('reports every result and the queue depth to the observer', async () => {
    const observer: IngestObserver = { ingest: jest.fn(), ingestQueueDepth: jest.fn() };
    const deliver = jest.fn().mockRejectedValueOnce(new Error('down')).mockResolvedValue(undefined);
    const ingest = createMemoryLoginIngest({
      deliver,
      log: pino({ level: 'silent' }),
      maxRetries: 1,
      backoffMs: noDelay,
      observer,
    });
    await ingest.enqueue(event);
    await ingest.drain(1000);
    expect((observer.ingest as jest.Mock).mock.calls).toEqual([['queued'], ['failed'], ['delivered']]);
    expect(observer.ingestQueueDepth).toHaveBeenLastCalledWith(0);
  });

  it('drops events beyond maxPending instead of growing without bound', async () => {
    const deliver = jest.fn(() => new Promise<void>(() => {}));
    const ingest = createMemoryLoginIngest({
      deliver,
      log: pino({ level: 'silent' }),
      maxRetries: 0,
      maxPending: 2,
      concurrency: 1,
    });
    for (let i = 0; i < 3; i += 1) await ingest.enqueue({ uid: `uid-${i}`, accessToken: 't' });
    expect(ingest.stats()).toMatchObject({ queued: 2, dropped: 1, pending: 2 });
  });

  it('on close, tries waiting retries once more and drops what the grace period leaves', async () => {
    const deliver = jest.fn().mockRejectedValueOnce(new Error('down')).mockResolvedValue(undefined);
    const ingest = createMemoryLoginIngest({
      deliver,
      log: pino({ level: 'silent' }),
      maxRetries: 5,
      backoffMs: () => 60_000,
      closeGraceMs: 500,
    });
    await ingest.enqueue(event);
    // The first attempt failed and its retry now waits a minute.
    await eventually(() => expect(ingest.stats().retried).toBe(1), { timeoutMs: 1_000, intervalMs: 5 });
    expect(ingest.pending()).toBe(1);
    await ingest.close();
    expect(deliver).toHaveBeenCalledTimes(2);
    expect(ingest.stats()).toMatchObject({ delivered: 1, pending: 0 });
    await ingest.enqueue(event);
    expect(ingest.stats().dropped).toBe(1);
  });
});

describe('login ingest over the collector', () => {
  useNock();

  const config = testConfig({
    user_collector: {
      base_url: 'https://collector.example.test',
      internal_token: 'tok-123',
      max_retries: 2,
      timeout: 1,
    },
  });
  const log = pino({ level: 'silent' });

  it('delivers {uid, accessToken} with x-internal-token after retrying a collector failure', async () => {
    const scope = nock('https://collector.example.test', { reqheaders: { 'x-internal-token': 'tok-123' } })
      .post('/ingest/login', { uid: 'uid-1', accessToken: event.accessToken })
      .reply(503)
      .post('/ingest/login', { uid: 'uid-1', accessToken: event.accessToken })
      .reply(202, {});
    const ingest = createLoginIngest(config, log, { backoffMs: noDelay });
    await ingest.enqueue(event);
    await ingest.drain(2000);
    expect(scope.isDone()).toBe(true);
    expect(ingest.stats()).toMatchObject({ delivered: 1, retried: 1 });
  });

  it('never blocks on a collector that is down: enqueue resolves before any answer', async () => {
    nock('https://collector.example.test').post('/ingest/login').times(3).delay(300).reply(503);
    const ingest = createLoginIngest(config, log, { backoffMs: noDelay });
    const started = Date.now();
    await ingest.enqueue(event);
    // Before the collector's first answer (300 ms), with room for a busy machine.
    expect(Date.now() - started).toBeLessThan(250);
    await ingest.drain(3000);
    expect(ingest.stats()).toMatchObject({ failed: 1, retried: 2 });
  });

  it('skips ingest when no collector is configured, saying so once', async () => {
    const { log: capturing, lines } = capturingLog();
    const collector = createCollectorClient(testConfig(), capturing);
    const ingest = createLoginIngest(testConfig(), capturing, { collector });
    await ingest.enqueue(event);
    await ingest.enqueue(event);
    expect(lines.filter((l) => l.includes('login ingest is skipped'))).toHaveLength(1);
    expect(ingest.stats()).toMatchObject({ delivered: 0, dropped: 2, pending: 0 });
  });
});
