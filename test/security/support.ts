import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import request from 'supertest';
import type { Deps } from '../../src/domain/deps';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import type { OutboxMessage } from '../../src/sandbox/outbox';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * The security end-to-end tests: the real app over the embedded sandbox upstreams (identity
 * provider, SMS gateway, SMTP server, collector), driven from outside with public requests
 * only (never x-internal-key), codes read from the sandbox outbox by recipient. Every test
 * gets its own sandbox and its own app, so accounts, codes and rate limits start fresh, and a
 * fake clock the test moves to pass cooldowns and windows.
 */

export const MARIO = { ...sandboxSeedUsers[0]!, phone: '+393331234567' };
export const GIULIA = sandboxSeedUsers[1]!;
export const ATTACKER_PHONE = '+393339990001';

const log = pino({ level: 'silent' });

export interface SecurityApp {
  sandbox: Sandbox;
  deps: Deps;
  /** http://127.0.0.1:port of the app, for a client of its own (a proxy in front of it). */
  url: string;
  /** POSTs a JSON body to `/?action=<action>`, as the frontend does. */
  post(action: string, body: Record<string, unknown>): request.Test;
  /** POSTs these exact bytes with these exact headers (Content-Length added), answering status and parsed body. */
  rawPost(
    path: string,
    headers: Record<string, string>,
    body: Buffer,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Moves the app's clock forward. */
  tick(ms: number): void;
  /** Messages the sandbox delivered to this phone or email, newest first. */
  messagesTo(to: string): OutboxMessage[];
  /** The code of the newest SMS or mail delivered to this phone or email. */
  codeFor(to: string): string | undefined;
  close(): Promise<void>;
}

export async function startSecurityApp(overrides: Record<string, unknown> = {}): Promise<SecurityApp> {
  let now = Date.now();
  const sandbox = await startSandbox(testConfig(overrides), log);
  const deps = testDeps(sandbox.config, { now: () => now });
  // One listening server for the whole test, so concurrent requests share one app.
  const server: Server = createServer(testApp(deps).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const messagesTo = (to: string) =>
    sandbox.outbox
      .list()
      .filter((m) => (m.channel === 'sms' || m.channel === 'email') && m.to.toLowerCase() === to.toLowerCase());
  return {
    sandbox,
    deps,
    url,
    post: (action, body) => request(url).post(`/?action=${action}`).send(body),
    rawPost: (path, headers, body) =>
      new Promise((resolve, reject) => {
        const port = (server.address() as AddressInfo).port;
        const req = httpRequest(
          { host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers, 'content-length': body.length } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({
                status: res.statusCode!,
                body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    tick: (ms) => {
      now += ms;
    },
    messagesTo,
    codeFor: (to) => messagesTo(to).find((m) => m.code)?.code,
    close: async () => {
      await deps.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sandbox.close();
    },
  };
}

/** A fresh sandbox and app for each test of the file (or describe block); `app()` is the current one. */
export function useSecurityApp(overrides: Record<string, unknown> = {}): () => SecurityApp {
  let current: SecurityApp | undefined;
  beforeEach(async () => {
    current = await startSecurityApp(overrides);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('the security app is started per test');
    return current;
  };
}

/** The claims a proof carries (its middle part), to show what it vouches for. */
export function proofClaims(proof: string): Record<string, unknown> {
  const [, body] = proof.split('.');
  return JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

export const COOLDOWN_MS = 61_000;

/** The `__utp` cookies an answer sets. */
export const tokenCookies = (res: request.Response): string[] => {
  const header = res.headers['set-cookie'] as unknown;
  const cookies = Array.isArray(header) ? (header as string[]) : typeof header === 'string' ? [header] : [];
  return cookies.filter((cookie) => cookie.startsWith('__utp='));
};

/** A phone login of an account with the primitives (the typical sequence "phone, user exists"), answering the search's proof for the uid. */
export async function primitivePhoneLogin(app: SecurityApp, phone: string): Promise<{ uid: string; proof: string }> {
  await app.post('otp_generate', { uid: phone }).expect(200);
  const verified = await app.post('verify_otp', { email: phone, otp_code: app.codeFor(phone) });
  const found = await app.post('search_user', { phone, proof: verified.body.data.proof });
  return { uid: found.body.meta.uid as string, proof: found.body.data.proof as string };
}

/** A phone login with FeLogin and FeVerifyOtp, answering the step-90 data. */
export async function fePhoneLogin(app: SecurityApp, phone: string): Promise<Record<string, unknown>> {
  await app.post('FeLogin', { identifier: phone });
  const done = await app.post('FeVerifyOtp', { flow: 'phone', phone, otp_code: app.codeFor(phone) });
  return done.body.data as Record<string, unknown>;
}
