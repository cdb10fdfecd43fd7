import { testCtx } from '../support/context';
import nock from 'nock';
import pino from 'pino';
import { collectorUrl, createCollectorClient } from '../../src/clients/collector';
import { isApiError } from '../../src/core/errors';
import { createCollectorFake, tokenFingerprint } from '../../src/sandbox/collector';
import { startSandbox } from '../../src/sandbox';
import { testConfig } from '../support/app';
import { useNock } from '../support/nock';

const log = pino({ level: 'silent' });
const config = testConfig({
  user_collector: { base_url: 'https://collector.example.test/api/', internal_token: 'internal-token-123', timeout: 1 },
});

describe('user collector client', () => {
  useNock();

  it('posts {uid, accessToken} as JSON to the ingest path with x-internal-token', async () => {
    const scope = nock('https://collector.example.test', {
      reqheaders: { 'x-internal-token': 'internal-token-123', 'content-type': /application\/json/ },
    })
      .post('/api/ingest/login', { uid: 'uid-1', accessToken: 'jwt.token.value' })
      .reply(202, { accepted: true });
    const result = await createCollectorClient(config, log).ingestLogin(testCtx, {
      uid: 'uid-1',
      accessToken: 'jwt.token.value',
    });
    expect(result.status).toBe(202);
    expect(scope.isDone()).toBe(true);
  });

  it('uses a configured ingest path', () => {
    expect(collectorUrl({ ...config.user_collector, ingest_login_path: 'v2/logins' })).toBe(
      'https://collector.example.test/api/v2/logins',
    );
  });

  it('turns a collector error into upstream_error', async () => {
    nock('https://collector.example.test').post('/api/ingest/login').reply(500, 'boom');
    const failure = await createCollectorClient(config, log)
      .ingestLogin(testCtx, { uid: 'uid-1', accessToken: 't' })
      .catch((err: unknown) => err);
    expect(isApiError(failure) && failure.reason).toBe('upstream_error');
  });

  it('gives up after user_collector.timeout seconds', async () => {
    nock('https://collector.example.test').post('/api/ingest/login').delay(3000).reply(202, {});
    const started = Date.now();
    const failure = await createCollectorClient(config, log)
      .ingestLogin(testCtx, { uid: 'uid-1', accessToken: 't' })
      .catch((err: unknown) => err);
    expect(isApiError(failure) && failure.reason).toBe('upstream_error');
    // 1 s allowed, 3 s the answer: the margin is for a busy machine, the gap still tells the timeout from the answer.
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('is not configured without a base_url', () => {
    const client = createCollectorClient(testConfig(), log);
    expect(client.configured).toBe(false);
    expect(client.url).toBe('');
  });

  it('reaches the sandbox collector, which records the ingest with a digest of the token, none of its characters', async () => {
    const sandbox = await startSandbox(testConfig(), log, [createCollectorFake]);
    try {
      const client = createCollectorClient(sandbox.config, log);
      await client.ingestLogin(testCtx, { uid: 'uid-1', accessToken: 'jwt.token.value-wxyz' });
      expect(sandbox.outbox.list('collector')).toEqual([
        expect.objectContaining({
          to: 'uid-1',
          body: JSON.stringify({ uid: 'uid-1', token_sha256: tokenFingerprint('jwt.token.value-wxyz') }),
        }),
      ]);
      expect(sandbox.outbox.list('collector')[0]!.body).not.toContain('wxyz');
    } finally {
      await sandbox.close();
    }
  });

  it('is refused by the sandbox collector without the internal token', async () => {
    const sandbox = await startSandbox(testConfig(), log, [createCollectorFake]);
    try {
      const client = createCollectorClient(
        testConfig({ user_collector: { ...sandbox.config.user_collector, internal_token: 'wrong' } }),
        log,
      );
      const failure = await client
        .ingestLogin(testCtx, { uid: 'uid-1', accessToken: 't' })
        .catch((err: unknown) => err);
      expect(isApiError(failure) && failure.data.upstream_status).toBe(401);
      expect(sandbox.outbox.list('collector')).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });
});
