import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import { sandboxClient, scenarios } from '../../scripts/record-journeys';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';
import { forwardingProxy } from '../support/forwarding-proxy';

/*
 * Stoplight Prism, a validator written by others, as a validating proxy in front of the service
 * on the sandbox (issue 47): every recorded journey of scripts/record-journeys.ts (codes read from
 * the outbox through Prism too), a few primitives, the probes and the document go through it,
 * and Prism checks each request and each answer against docs/openapi.json. A violation is an
 * `sl-violations` header on the answer, or Prism's own problem+json (with --errors, a request
 * the document forbids is answered 422 by Prism and never reaches the service).
 */

const ROOT = join(__dirname, '..', '..');
/** Prism's command line, as its package names it (its `bin`). */
const PRISM_PACKAGE = require.resolve('@stoplight/prism-cli/package.json');
const PRISM = join(
  PRISM_PACKAGE,
  '..',
  (JSON.parse(readFileSync(PRISM_PACKAGE, 'utf8')) as { bin: { prism: string } }).bin.prism,
);

interface Seen {
  request: string;
  status: number;
  violations: string | null;
  problem: string | null;
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** Starts `prism proxy` and resolves when it listens; its output is kept to explain a failure. */
async function startPrism(
  target: string,
  port: number,
  document = join(ROOT, 'docs', 'openapi.json'),
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(
    process.execPath,
    [PRISM, 'proxy', document, target, '--host', '127.0.0.1', '--port', String(port), '--errors'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`prism exited (${code}) before listening:\n${output}`)));
  });
  return { child, output: () => output };
}

describe('Prism as a validating proxy over the recorded journeys', () => {
  let service: Service;
  let prism: Awaited<ReturnType<typeof startPrism>> | undefined;
  let front: { url: string; server: Server } | undefined;
  const seen: Seen[] = [];

  beforeAll(async () => {
    const silent = pino({ level: 'silent' });
    service = await startService(testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port: 0 } }), {
      log: silent,
      otpLog: silent,
    });
    const port = await freePort();
    prism = await startPrism(service.url, port);
    // In front of Prism: notes, for each exchange, what Prism said of it.
    front = await forwardingProxy(`http://127.0.0.1:${port}`, (exchange) => {
      const type = exchange.headers.get('content-type') ?? 'text/plain';
      seen.push({
        request: `${exchange.method} ${exchange.url} ${exchange.requestBody.slice(0, 200)}`,
        status: exchange.status,
        violations: exchange.headers.get('sl-violations'),
        problem: type.startsWith('application/problem+json') ? exchange.body.slice(0, 1000) : null,
      });
    });
  }, 60_000);
  afterAll(async () => {
    front?.server.closeAllConnections();
    await new Promise((resolve) => front?.server.close(resolve));
    prism?.child.kill();
    await service?.close();
  });

  it('finds no violation in any request or answer', async () => {
    const client = sandboxClient(front!.url);
    for (const scenario of scenarios) await scenario.run(client);
    const call = (action: string, body: unknown) =>
      fetch(`${front!.url}/${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const key = '+393339990909';
    await call('otp_generate', { uid: key, phone: key });
    await call('otp_generate', { uid: key, phone: key });
    await call('verify_otp', { uid: key, otp_code: (await client.nextCode(key)) === '000000' ? '000001' : '000000' });
    await call('search_user', { phone: '+393331234567' });
    await call('login', { email: 'mario.rossi@example.com', password: 'wrong-password' });
    await call('newsletter_feed', {});
    await call('FeLogin', { identifier: 'giulia.bianchi@example.com', method: 'password' });
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/_sandbox/outbox'])
      await fetch(`${front!.url}${path}`);

    expect(seen.length).toBeGreaterThan(50);
    expect(seen.filter((s) => s.violations !== null || s.problem !== null || s.status >= 500)).toEqual([]);
  }, 120_000);

  // Prism is heard: a request the document forbids is refused by it, not passed on.
  it('refuses, itself, a request the document forbids', async () => {
    const before = seen.length;
    const res = await fetch(`${front!.url}/FeLogin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: 'mario.rossi@example.com', method: 'sms' }),
    });
    expect([res.status, seen[before]?.problem ?? '']).toEqual([422, expect.stringContaining('method')]);
  });

  // And it reads the answers: with a document that says FeLogin's next_step is a string, the service's number is one.
  it('reports an answer the document does not describe', async () => {
    const document = JSON.parse(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')) as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    document.components.schemas['FeLogin.Data']!.properties.next_step = { type: 'string' };
    const dir = mkdtempSync(join(tmpdir(), 'prism-'));
    const altered = join(dir, 'openapi.json');
    writeFileSync(altered, JSON.stringify(document));
    const port = await freePort();
    const strict = await startPrism(service.url, port, altered);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/FeLogin`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ identifier: 'giulia.bianchi@example.com', method: 'password' }),
      });
      const type = res.headers.get('content-type') ?? '';
      const told = `${res.headers.get('sl-violations') ?? ''} ${type.startsWith('application/problem+json') ? await res.text() : ''}`;
      expect(told).toContain('next_step');
    } finally {
      strict.child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
