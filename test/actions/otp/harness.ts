import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import nock from 'nock';
import pino from 'pino';
import request from 'supertest';
import { deepMerge } from '../../../src/core/config/load';
import type { Deps, DepsOverrides } from '../../../src/domain/deps';
import { codeIn } from '../../../src/sandbox/sms';
import { startSmtpServer, type CapturedMail } from '../../../src/sandbox/smtp';
import { testApp, testConfig, testDeps } from '../../support/app';
export { useNock } from '../../support/nock';

/* Shared set-up of the OTP HTTP tests: the real app, a fake clock, a nock SMS gateway and a real SMTP server. */

const SMS_ORIGIN = 'https://sms.example.test';
const SMS_PATH = '/v1/send';
export const SMS_KEY = 'sms-key-0123456789';

export const smsConfig = { sms: { api_url: `${SMS_ORIGIN}${SMS_PATH}`, api_key: SMS_KEY, sender: 'Login' } };

/** An identity provider, asked only when a code goes to a phone and an email together (rule 2). */
const IDP_ORIGIN = 'https://idp.otp.test';
const identityConfig = {
  identity: { base_url: IDP_ORIGIN, aid: 'AID', api_token: 'publisher-token', timeout_seconds: 5 },
};

/** The provider's phone search answering that `digits` belongs to one account with `email` (none when null). */
export function phoneHolder(email: string | null, digits = '393331234567') {
  const users = email ? [{ uid: 'PNIholder', email, custom_fields: [{ field_name: 'otp_phone', value: digits }] }] : [];
  return nock(IDP_ORIGIN)
    .post('/api/v3/publisher/user/search')
    .reply(200, { code: 0, total: users.length, count: users.length, offset: 0, limit: 100, users });
}

export interface SmsSent {
  receiver: string;
  body: string;
  sender: string;
  authorization: string | undefined;
}

/** A nock SMS gateway answering `status` to every call and recording each one. */
export function smsGateway(status = 200): { sent: SmsSent[]; codes(): string[] } {
  const sent: SmsSent[] = [];
  nock(SMS_ORIGIN)
    .persist()
    .post(SMS_PATH)
    .reply(function (_uri, body) {
      const { receiver, body: text, sender } = body as { receiver: string; body: string; sender: string };
      sent.push({ receiver, body: text, sender, authorization: this.req.headers.authorization });
      return [status, status < 300 ? { id: `m${sent.length}` } : { error: 'down' }];
    });
  return { sent, codes: () => sent.map((s) => codeIn(s.body)!) };
}

/** A real SMTP server for the whole file; `mails` is emptied before each test. */
export function useSmtp(): { mails: CapturedMail[]; port(): number; codes(): string[] } {
  const mails: CapturedMail[] = [];
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  beforeAll(async () => {
    smtp = await startSmtpServer((mail) => mails.push(mail));
  });
  beforeEach(() => {
    mails.length = 0;
  });
  afterAll(async () => {
    await smtp.close();
  });
  return { mails, port: () => smtp.port, codes: () => mails.map((m) => codeIn(m.text)!) };
}

export const mailConfig = (port: number) => ({
  mail: { host: '127.0.0.1', port, from_address: 'otp@example.test', app_name: 'Login' },
});

/** OTP log lines as parsed JSON, to check what reaches the log file. */
export function memoryLog(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info', msgPrefix: '[OTP] ' }, stream), lines };
}

export interface Harness {
  deps: Deps;
  post(action: string, body: unknown): request.Test;
  tick(ms: number): void;
  close(): Promise<void>;
}

/** The real app on a loopback port (one server for all requests, so concurrent calls share it) with a fake clock. */
export async function startApp(
  overrides: Record<string, unknown> = {},
  depsOverrides: DepsOverrides = {},
): Promise<Harness> {
  let now = Date.UTC(2030, 0, 15, 10, 0, 0);
  const deps = testDeps(testConfig(deepMerge(deepMerge(smsConfig, identityConfig), overrides)), {
    now: () => now,
    ...depsOverrides,
  });
  const server: Server = createServer(testApp(deps).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    deps,
    post: (action, body) =>
      request(url)
        .post(`/?action=${action}`)
        .send(body as object),
    tick: (ms) => {
      now += ms;
    },
    close: async () => {
      await deps.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
