import http, { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import nock from 'nock';
import request from 'supertest';
import feedA from '../../src/sandbox/fixtures/feeds/feed_a.json';
import type { Deps } from '../../src/domain/deps';
import { messageOf } from '../../src/core/errors';
import { testApp, testConfig, testDeps } from '../support/app';
import { useNock } from '../support/nock';

/*
 * Only JSON bodies reach an action: the "simple" CORS types (text/plain, form-urlencoded,
 * multipart) are what a page on another origin can make a browser POST without a preflight, so
 * they answer 415 before any code is sent. A body that is not encoded as its Content-Encoding
 * says is the client's fault too: the envelope with a 4xx, never a 500.
 */

const SMS_ORIGIN = 'https://sms.example.test';
const SMS_PATH = '/v1/send';
const FEEDS = 'http://feeds.test';
const PHONE = '+39 333 123 4567';
const BODY = JSON.stringify({ uid: PHONE });
const UNSUPPORTED = {
  success: false,
  error: messageOf('unsupported_media_type'),
  data: { reason: 'unsupported_media_type' },
};

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

useNock();

let deps: Deps;
let server: Server;
let port: number;
let smsCalls: number;

beforeEach(async () => {
  smsCalls = 0;
  // Every call to the gateway is counted: a refused request must not reach it.
  nock(SMS_ORIGIN)
    .persist()
    .post(SMS_PATH)
    .reply(() => {
      smsCalls += 1;
      return [200, { id: `m${smsCalls}` }];
    });
  deps = testDeps(
    testConfig({
      sms: { api_url: `${SMS_ORIGIN}${SMS_PATH}`, api_key: 'sms-key-0123456789', sender: 'Login' },
      newsletter: { feed_base_url: `${FEEDS}/nl` },
    }),
  );
  server = createServer(testApp(deps).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
});

afterEach(async () => {
  await deps.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const url = () => `http://127.0.0.1:${port}`;

/** A POST with exactly these headers and bytes: supertest would add or rewrite some of them. */
function rawPost(path: string, headers: Record<string, string | number>, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const withLength = (headers: Record<string, string>, body: Buffer) => ({ ...headers, 'content-length': body.length });

describe('bodies a browser may send cross-origin without a preflight', () => {
  it('refuses text/plain holding JSON with 415 and sends no SMS', async () => {
    const res = await request(url()).post('/?action=otp_generate').set('content-type', 'text/plain').send(BODY);
    expect(res.status).toBe(415);
    expect(res.body).toEqual(UNSUPPORTED);
    expect(smsCalls).toBe(0);
  });

  it('refuses text/plain with a charset', async () => {
    const res = await request(url()).post('/otp_generate').set('content-type', 'text/plain;charset=UTF-8').send(BODY);
    expect(res.status).toBe(415);
    expect(smsCalls).toBe(0);
  });

  it('refuses a form-urlencoded body with 415 and sends no SMS', async () => {
    const res = await request(url()).post('/?action=otp_generate').type('form').send({ uid: PHONE });
    expect(res.status).toBe(415);
    expect(res.body).toEqual(UNSUPPORTED);
    expect(smsCalls).toBe(0);
  });

  it('refuses a form-urlencoded body that happens to be JSON text', async () => {
    const res = await request(url())
      .post('/?action=otp_generate')
      .set('content-type', 'application/x-www-form-urlencoded')
      .send(BODY);
    expect(res.status).toBe(415);
    expect(smsCalls).toBe(0);
  });

  it('refuses a multipart body with 415 and sends no SMS', async () => {
    const res = await request(url()).post('/?action=otp_generate').field('uid', PHONE);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.status).toBe(415);
    expect(res.body).toEqual(UNSUPPORTED);
    expect(smsCalls).toBe(0);
  });

  it('refuses a body without a Content-Type (a typeless Blob) with 415', async () => {
    const body = Buffer.from(BODY);
    const res = await rawPost('/?action=otp_generate', { 'content-length': body.length }, body);
    expect(res).toEqual({ status: 415, body: UNSUPPORTED });
    expect(smsCalls).toBe(0);
  });

  it('refuses a chunked text/plain body with 415', async () => {
    const res = await rawPost(
      '/otp_generate',
      { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
      Buffer.from(BODY),
    );
    expect(res).toEqual({ status: 415, body: UNSUPPORTED });
    expect(smsCalls).toBe(0);
  });

  it.each(['application/jsonp', 'application/json-seq', 'text/json', 'application/xml', 'json'])(
    'refuses %s with 415',
    async (type) => {
      const body = Buffer.from(BODY);
      const res = await rawPost('/otp_generate', withLength({ 'content-type': type }, body), body);
      expect(res).toEqual({ status: 415, body: UNSUPPORTED });
      expect(smsCalls).toBe(0);
    },
  );
});

describe('JSON bodies', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON;charset=UTF-8',
    'application/vnd.x+json',
    'application/vnd.x+json; charset=utf-8',
  ])('accepts %s and sends the code', async (type) => {
    const res = await request(url()).post('/?action=otp_generate').set('content-type', type).send(BODY);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { notified: { sms: true } } });
    expect(smsCalls).toBe(1);
  });

  it('keeps malformed JSON with the right type a 400 malformed_json', async () => {
    const res = await request(url()).post('/otp_generate').set('content-type', 'application/json').send('{"uid":');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'malformed_json' } });
    expect(smsCalls).toBe(0);
  });
});

describe('a request without a body', () => {
  const serveFeed = () =>
    nock(FEEDS)
      .get(/^\/nl\/feed_[a-d]$/)
      .times(4)
      .reply(200, feedA);

  it('is {} with Content-Length 0 and no Content-Type (newsletter_feed)', async () => {
    const scope = serveFeed();
    const res = await rawPost('/?action=newsletter_feed', { 'content-length': 0 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, error: null, data: { items: expect.any(Array) } });
    expect(scope.isDone()).toBe(true);
  });

  it('is {} with no Content-Length and no Transfer-Encoding at all', async () => {
    serveFeed();
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('POST /newsletter_feed HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
      );
      let received = '';
      socket.on('data', (chunk) => (received += String(chunk)));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({
      success: true,
      data: { items: expect.any(Array) },
    });
  });

  it('is {} with supertest and no send(), whatever Content-Type it carries', async () => {
    serveFeed();
    const res = await request(url()).post('/newsletter_feed').set('content-type', 'text/plain');
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
  });

  it('runs otp_generate as {}: a validation failure, no SMS', async () => {
    const res = await request(url()).post('/otp_generate');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_request' } });
    expect(smsCalls).toBe(0);
  });
});

describe('Content-Encoding', () => {
  const json = { 'content-type': 'application/json' };

  it.each(['gzip', 'deflate', 'br'])(
    'answers 400 with the envelope when the body is not really %s',
    async (encoding) => {
      const body = Buffer.from(BODY);
      const res = await rawPost('/otp_generate', withLength({ ...json, 'content-encoding': encoding }, body), body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        error: messageOf('malformed_json'),
        data: { reason: 'malformed_json' },
      });
      expect(smsCalls).toBe(0);
    },
  );

  it('answers 400 to a truncated gzip body', async () => {
    const body = gzipSync(BODY).subarray(0, 12);
    const res = await rawPost('/otp_generate', withLength({ ...json, 'content-encoding': 'gzip' }, body), body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'malformed_json' } });
  });

  it.each(['compress', 'zstd', 'gzip, br'])(
    'answers 415 with the envelope to Content-Encoding: %s',
    async (encoding) => {
      const body = Buffer.from(BODY);
      const res = await rawPost('/otp_generate', withLength({ ...json, 'content-encoding': encoding }, body), body);
      expect(res.status).toBe(415);
      expect(res.body).toEqual({
        success: false,
        error: messageOf('unsupported_media_type'),
        data: { reason: 'unsupported_media_type' },
      });
      expect(smsCalls).toBe(0);
    },
  );

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const)('accepts a body really encoded with %s', async (encoding, encode) => {
    const body = encode(Buffer.from(BODY));
    const res = await rawPost('/otp_generate', withLength({ ...json, 'content-encoding': encoding }, body), body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true });
    expect(smsCalls).toBe(1);
  });

  it('answers 413 when a small gzip body inflates past the body limit', async () => {
    const body = gzipSync(JSON.stringify({ uid: PHONE, pad: 'x'.repeat(1_000_000) }));
    const res = await rawPost('/otp_generate', withLength({ ...json, 'content-encoding': 'gzip' }, body), body);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ success: false, data: { reason: 'payload_too_large' } });
  });
});
