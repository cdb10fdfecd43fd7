import { Writable } from 'node:stream';
import nock from 'nock';
import pino from 'pino';
import request from 'supertest';
import { z } from 'zod';
import { defineAction, type Action } from '../../src/actions/action';
import { createUpstream } from '../../src/clients/http';
import { censorSecrets, createLogger } from '../../src/core/logger';
import type { Deps } from '../../src/domain/deps';
import { testApp, testDeps } from '../support/app';
import { useNock } from '../support/nock';

/*
 * Issue 6: one structured line per request and per upstream call, and no code, token, key or
 * full phone number in any line. The fake actions below carry all of those through a request
 * body, an upstream query, headers and reply, the way the OTP and identity actions do.
 */

const PHONE = '+393331234567';
const CODE = '482913';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.user-access-token-4f7a';
const API_KEY = 'publisher-api-token-9c21';
const IDP = 'http://idp.test';
const secrets = [PHONE, PHONE.slice(1), '3331234567', CODE, TOKEN, API_KEY];

type Line = Record<string, unknown>;

function capture() {
  const lines: Line[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const text of String(chunk).split('\n').filter(Boolean)) {
        raw.push(text);
        lines.push(JSON.parse(text) as Line);
      }
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines, raw };
}

function setup() {
  const { log, lines, raw } = capture();
  const idp = createUpstream({ name: 'identity', label: 'identità', timeoutMs: 2000, log });
  const verify = defineAction({
    name: 'verify_like',
    request: z.object({ phone: z.string(), otp_code: z.string().regex(/^\d{6}$/), access_token: z.string() }),
    handler: async (input, ctx) => {
      await idp.call(ctx, {
        endpoint: 'search',
        method: 'POST',
        url: `${IDP}/user/search`,
        params: { api_token: API_KEY, phone: input.phone },
        headers: { Authorization: `Bearer ${input.access_token}` },
        form: { otp_phone: input.phone.slice(1), code: input.otp_code },
      });
      await idp.call(ctx, { endpoint: 'token', method: 'POST', url: `${IDP}/token`, params: { api_token: API_KEY } });
      return { data: { valid: true } };
    },
  });
  const deps = testDeps(undefined, { log });
  opened.push(deps);
  const actions = new Map<string, Action>([verify].map((a) => [a.name, a as Action]));
  return { server: testApp(deps, { actions }).callback(), lines, raw };
}

const opened: Deps[] = [];
const body = { phone: PHONE, otp_code: CODE, access_token: TOKEN };
const byMsg = (lines: Line[], msg: string) => lines.filter((l) => l.msg === msg);

useNock();
afterAll(async () => {
  for (const deps of opened) await deps.close();
});

describe('request log', () => {
  it('writes one line per request with action, outcome reason, duration and request id', async () => {
    const { server, lines } = setup();
    nock(IDP).post('/user/search').query(true).reply(200, {}).post('/token').query(true).reply(200, {});
    const res = await request(server).post('/verify_like').send(body);
    const requests = byMsg(lines, 'request');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      action: 'verify_like',
      reason: 'ok',
      status: 200,
      request_id: res.headers['x-request-id'],
    });
    expect(typeof requests[0]!.duration_ms).toBe('number');
  });

  it('writes the failure reason of a request that failed', async () => {
    const { server, lines } = setup();
    await request(server)
      .post('/verify_like')
      .send({ ...body, otp_code: 'abc' });
    expect(byMsg(lines, 'request')).toEqual([
      expect.objectContaining({ action: 'verify_like', reason: 'invalid_request' }),
    ]);
  });
});

describe('upstream call log', () => {
  it('writes one line per upstream call with client, endpoint, status, outcome and the request id', async () => {
    const { server, lines } = setup();
    nock(IDP).post('/user/search').query(true).reply(200, {}).post('/token').query(true).reply(200, {});
    const res = await request(server).post('/verify_like').send(body).set('x-request-id', 'req-42');
    expect(res.body.success).toBe(true);
    const calls = byMsg(lines, 'upstream call');
    expect(calls.map((c) => c.endpoint)).toEqual(['search', 'token']);
    for (const call of calls) {
      expect(call).toMatchObject({
        level: 30,
        client: 'identity',
        method: 'POST',
        status: 200,
        outcome: 'ok',
        request_id: 'req-42',
      });
      expect(typeof call.duration_ms).toBe('number');
    }
  });

  it('writes a failed upstream call as one warning', async () => {
    const { server, lines } = setup();
    nock(IDP).post('/user/search').query(true).reply(502, { error: TOKEN });
    await request(server).post('/verify_like').send(body);
    expect(byMsg(lines, 'upstream call failed')).toEqual([
      expect.objectContaining({
        level: 40,
        client: 'identity',
        endpoint: 'search',
        status: 502,
        outcome: 'http_error',
      }),
    ]);
    expect(byMsg(lines, 'request')).toEqual([expect.objectContaining({ reason: 'upstream_error' })]);
  });
});

describe('secrets in logs', () => {
  it('writes no code, token, key or full phone number for a request with upstream calls', async () => {
    const { server, raw } = setup();
    const scope = nock(IDP)
      .post('/user/search', (form) => form.code === CODE)
      .query({ api_token: API_KEY, phone: PHONE })
      .matchHeader('authorization', `Bearer ${TOKEN}`)
      .reply(200, { access_token: TOKEN, phone: PHONE })
      .post('/token')
      .query(true)
      .reply(200, { access_token: TOKEN });
    await request(server).post('/verify_like').send(body);
    expect(scope.isDone()).toBe(true);
    expect(raw.length).toBeGreaterThanOrEqual(3);
    for (const secret of secrets) expect(raw.join('\n')).not.toContain(secret);
  });

  it('writes none of them when the upstream fails or the request is refused', async () => {
    const { server, raw } = setup();
    nock(IDP).post('/user/search').query(true).reply(500, `token ${TOKEN} for ${PHONE}`);
    await request(server).post('/verify_like').send(body);
    await request(server)
      .post('/verify_like')
      .send({ ...body, otp_code: 12 });
    await request(server)
      .post('/verify_like')
      .set('content-type', 'application/json')
      .send(`{"phone":"${PHONE}","otp_code":"${CODE}",`);
    expect(raw.length).toBeGreaterThanOrEqual(4);
    for (const secret of secrets) expect(raw.join('\n')).not.toContain(secret);
  });

  it('does not log the path of an unknown action, which may be anything the caller typed', async () => {
    const { server, raw, lines } = setup();
    await request(server)
      .post(`/${PHONE.slice(1)}`)
      .send({});
    expect(byMsg(lines, 'request')).toEqual([
      expect.objectContaining({ action: 'unknown', reason: 'unknown_action', status: 404 }),
    ]);
    expect(raw.join('\n')).not.toContain(PHONE.slice(1));
  });
});

describe('the service logger', () => {
  const lineOf = (fields: Record<string, unknown>): Line => {
    const raw: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        raw.push(String(chunk));
        done();
      },
    });
    createLogger('info', stream).info(fields, 'line');
    return JSON.parse(raw.join('')) as Line;
  };

  it('censors secret fields at the top of a line and one level down, and keeps the rest', () => {
    const line = lineOf({
      token: TOKEN,
      otp_code: CODE,
      action: 'verify_otp',
      upstream: { api_key: API_KEY, status: 200 },
      password: 'hunter2',
    });
    expect(line).toMatchObject({
      token: '[redacted]',
      otp_code: '[redacted]',
      action: 'verify_otp',
      upstream: { api_key: '[redacted]', status: 200 },
      password: '[redacted]',
    });
    expect(JSON.stringify(line)).not.toContain(TOKEN);
    expect(JSON.stringify(line)).not.toContain(API_KEY);
  });

  it('censors every field name on the list, whatever the value', () => {
    const names = [
      'otp',
      'code',
      'otp_code',
      'token',
      'access_token',
      'accessToken',
      'refresh_token',
      'api_key',
      'api_token',
      'authorization',
      'password',
      'secret',
    ];
    const line = lineOf({
      nested: Object.fromEntries(names.map((name) => [name, { deep: CODE }])),
      ...Object.fromEntries(names.map((name) => [name, 12345])),
    });
    for (const name of names) {
      expect(line[name]).toBe('[redacted]');
      expect((line.nested as Line)[name]).toBe('[redacted]');
    }
  });

  it('leaves the logged object as it was, and a line without secrets as it is', () => {
    const fields = { access_token: TOKEN, upstream: { token: TOKEN } };
    lineOf(fields);
    expect(fields).toEqual({ access_token: TOKEN, upstream: { token: TOKEN } });
    expect(censorSecrets({ action: 'get_user', status: 200 })).toEqual({ action: 'get_user', status: 200 });
    const clean = { action: 'get_user', nested: { status: 200 } };
    expect(censorSecrets(clean)).toBe(clean);
  });
});
