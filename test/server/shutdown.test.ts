import { connectOutcome } from '../support/ports';
import { spawn, type ChildProcess } from 'node:child_process';
import http, { type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/*
 * The real server (src/server.ts) in a child process. A slow request is a real one: otp_generate
 * sends its SMS through the gateway at sms.api_url, which here is a local server that holds its
 * answer. SIGTERM arrives while the gateway holds the call.
 */

const ROOT = join(__dirname, '..', '..');

interface Gateway {
  url: string;
  /** Resolves when the gateway received a message (the request is then in flight). */
  received: Promise<void>;
  close(): Promise<void>;
}

function startGateway(holdMs: number): Promise<Gateway> {
  let signal: () => void = () => {};
  const received = new Promise<void>((resolve) => (signal = resolve));
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      signal();
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), holdMs);
      timers.add(timer);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/send`,
        received,
        close: async () => {
          timers.forEach(clearTimeout);
          server.closeAllConnections();
          await new Promise((done) => server.close(done));
        },
      });
    });
  });
}

interface Child {
  process: ChildProcess;
  port: number;
  /** Resolves with the first log line whose msg starts with `prefix`. */
  logged(prefix: string): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

function startServer(env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SANDBOX__ENABLED: 'false',
      SERVER__HOST: '127.0.0.1',
      SERVER__PORT: '0',
      SECURITY__SECRET: 'shutdown-test-secret-shutdown-test-secret',
      OTP__LOG_FILE: '',
      LOG__LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<{ prefix: string; resolve: (line: Record<string, unknown>) => void }> = [];
  let buffer = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  child.stdout!.on('data', (chunk) => {
    buffer += String(chunk);
    let newline: number;
    while ((newline = buffer.indexOf('\n')) !== -1) {
      const text = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (String(line.msg).startsWith(waiter.prefix)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  const logged = (prefix: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const seen = lines.find((l) => String(l.msg).startsWith(prefix));
      if (seen) resolve(seen);
      else waiters.push({ prefix, resolve });
    });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`server exited with ${code} before listening: ${stderr}`)));
    void logged('listening').then((line) => resolve({ process: child, port: line.port as number, logged, exited }));
  });
}

/** POST on a keep-alive connection, as a browser or a load balancer would. */
function post(
  port: number,
  path: string,
  body: unknown,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Record<string, unknown> }> {
  const agent = new http.Agent({ keepAlive: true });
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += String(chunk)));
        res.on('end', () => {
          agent.destroy();
          resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> });
        });
      },
    );
    req.on('error', (err) => {
      agent.destroy();
      reject(err);
    });
    req.end(JSON.stringify(body));
  });
}

const children: ChildProcess[] = [];
const gateways: Gateway[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const gateway of gateways) await gateway.close();
});

describe('graceful shutdown', () => {
  it('answers a request in flight at SIGTERM, refuses new connections, and exits 0', async () => {
    const gateway = await startGateway(1000);
    gateways.push(gateway);
    const server = await startServer({
      SMS__API_URL: gateway.url,
      SMS__API_KEY: 'sms-key',
      SERVER__SHUTDOWN_GRACE_SECONDS: '5',
    });

    const answer = post(server.port, '/otp_generate', { uid: '+393331234567' });
    await gateway.received;
    server.process.kill('SIGTERM');
    await server.logged('shutting down');

    expect(await connectOutcome(server.port)).toBe('ECONNREFUSED');
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { notified: { sms: true } } });
    expect(res.headers.connection).toBe('close');
    expect(await server.exited).toBe(0);
  });

  it('logs the metrics listener at start-up and closes it on SIGTERM', async () => {
    const metricsPort = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const server = await startServer({ METRICS__PORT: String(metricsPort), SERVER__SHUTDOWN_GRACE_SECONDS: '1' });
    const line = await server.logged('metrics listening');
    expect(line).toMatchObject({ host: '127.0.0.1', port: metricsPort });
    expect(await connectOutcome(metricsPort)).toBe('connected');

    server.process.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(await connectOutcome(metricsPort)).toBe('ECONNREFUSED');
  });

  it('closes a request still running when the grace period ends, then exits 0', async () => {
    const gateway = await startGateway(8000);
    gateways.push(gateway);
    const server = await startServer({
      SMS__API_URL: gateway.url,
      SMS__API_KEY: 'sms-key',
      SERVER__SHUTDOWN_GRACE_SECONDS: '1',
    });

    const answer = post(server.port, '/otp_generate', { uid: '+393331234567' }).catch(
      (err: NodeJS.ErrnoException) => err.code,
    );
    await gateway.received;
    const signalled = Date.now();
    server.process.kill('SIGTERM');

    expect(await server.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(4000);
    expect(await answer).toBe('ECONNRESET');
  });
});
