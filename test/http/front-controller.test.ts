import request from 'supertest';
import { z } from 'zod';
import { defineAction, type Action } from '../../src/actions/action';
import { apiError } from '../../src/core/errors';
import { testApp, testDeps } from '../support/app';

const echo = defineAction({
  name: 'echo',
  request: z.object({ word: z.string().max(10) }),
  handler: async (input) => ({ data: { word: input.word } }),
});
const refuse = defineAction({
  name: 'refuse',
  request: z.object({}),
  handler: async () => {
    throw apiError('phone_taken');
  },
});
const crash = defineAction({
  name: 'crash',
  request: z.object({}),
  handler: async () => {
    throw new Error('boom at /secret/path');
  },
});
const actions = new Map<string, Action>([echo, refuse, crash].map((a) => [a.name, a as Action]));
const server = () => testApp(testDeps(), { actions }).callback();

describe('front controller', () => {
  it('answers POST /?action=X and POST /X the same way', async () => {
    const a = await request(server()).post('/?action=echo').send({ word: 'ciao' });
    const b = await request(server()).post('/echo').send({ word: 'ciao' });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ success: true, error: null, data: { word: 'ciao' } });
    expect(b.body).toEqual(a.body);
  });

  it('answers a validation failure with 200, reason invalid_request and the issues', async () => {
    const res = await request(server()).post('/echo').send({ word: 42 });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toEqual(expect.any(String));
    expect(res.body.data.reason).toBe('invalid_request');
    expect(res.body.data.issues).toEqual([expect.objectContaining({ path: 'word' })]);
  });

  it('maps a business error to the envelope with its reason', async () => {
    const res = await request(server()).post('/refuse').send({});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: false,
      error: 'Telefono già registrato su un altro account',
      data: { reason: 'phone_taken' },
    });
  });

  it('answers 404 for an unknown action, 405 for a wrong method, 400 for malformed JSON, 413 over the limit', async () => {
    const unknown = await request(server()).post('/?action=nope').send({});
    expect(unknown.status).toBe(404);
    expect(unknown.body.data.reason).toBe('unknown_action');
    expect((await request(server()).post('/').send({})).status).toBe(404);
    expect((await request(server()).post('/a/b').send({})).status).toBe(404);

    const wrongMethod = await request(server()).get('/echo');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');
    expect(wrongMethod.body.data.reason).toBe('method_not_allowed');

    const malformed = await request(server()).post('/echo').set('content-type', 'application/json').send('{"word":');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ success: false, data: { reason: 'malformed_json' } });

    const huge = await request(server())
      .post('/echo')
      .send({ word: 'x'.repeat(70 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ success: false, data: { reason: 'payload_too_large' } });
  });

  it.each([
    ['felogin', 'FeLogin'],
    ['otp_genrate', 'otp_generate'],
    ['verify-otp', 'verify_otp'],
    ['FeVerifyOTP', 'FeVerifyOtp'],
  ])('names the closest known action for a typo: %s -> %s', async (typed, meant) => {
    const res = await request(testApp().callback()).post(`/?action=${typed}`).send({});
    expect(res.status).toBe(404);
    expect(res.body.data).toEqual({ reason: 'unknown_action', action: typed, did_you_mean: meant });
  });

  it('suggests nothing for a name no action is near', async () => {
    const res = await request(testApp().callback()).post('/?action=transfer_money').send({});
    expect(res.body.data).toEqual({ reason: 'unknown_action', action: 'transfer_money' });
  });

  it('answers a bug with 500, a request id and no stack or message', async () => {
    const res = await request(server()).post('/crash').set('x-request-id', 'req-1').send({});
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      success: false,
      error: expect.any(String),
      data: { reason: 'internal_error', request_id: 'req-1' },
    });
    expect(JSON.stringify(res.body)).not.toContain('boom');
  });

  it('treats an empty body as {} and refuses __proto__ keys', async () => {
    expect((await request(server()).post('/refuse')).body.data.reason).toBe('phone_taken');
    // The JSON parser itself refuses __proto__ (400); other prototype keys are refused before validation.
    const proto = await request(server())
      .post('/echo')
      .set('content-type', 'application/json')
      .send('{"word":"a","__proto__":{"polluted":true}}');
    expect(proto.status).toBe(400);
    const ctor = await request(server())
      .post('/echo')
      .send({ word: 'a', nested: { constructor: { prototype: { polluted: true } } } });
    expect(ctor.status).toBe(200);
    expect(ctor.body.data.reason).toBe('invalid_request');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('serves /healthz and /readyz', async () => {
    expect((await request(server()).get('/healthz')).body).toMatchObject({ success: true });
    const notReady = testApp(testDeps(undefined, { ready: async () => false }), { actions }).callback();
    const res = await request(notReady).get('/readyz');
    expect([res.status, res.headers['retry-after']]).toEqual([503, '1']);
    expect(res.body.data.reason).toBe('store_unavailable');
  });
});
