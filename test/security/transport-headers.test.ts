import request from 'supertest';
import { testApp } from '../support/app';
import { MARIO, useSecurityApp } from './support';

/*
 * Every API answer, success or refusal, tells caches not to keep it and browsers not to sniff
 * it: answers carry tokens, proofs and profiles.
 */

const expectHardened = (res: request.Response) => {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
};

describe('transport headers', () => {
  const app = useSecurityApp();

  it('are on an answer that carries a proof and a token', async () => {
    await app().post('otp_generate', { uid: MARIO.phone });
    const verified = await app().post('verify_otp', { email: MARIO.phone, otp_code: app().codeFor(MARIO.phone) });
    expect(verified.body.data.proof).toEqual(expect.any(String));
    expectHardened(verified);

    const login = await app().post('FeLogin', { identifier: MARIO.phone });
    expectHardened(login);
  });

  it('are on refusals and unknown actions', async () => {
    expectHardened(await app().post('access_token', { uid: MARIO.uid }));
    expectHardened(await app().post('no_such_action', {}));
  });
});

describe('transport headers outside actions', () => {
  const server = testApp().callback();

  it.each([
    ['GET /', () => request(server).get('/')],
    ['GET /healthz', () => request(server).get('/healthz')],
    ['GET /metrics without a token', () => request(server).get('/metrics')],
    ['a form post (415)', () => request(server).post('/?action=otp_generate').type('form').send('uid=x')],
    ['a body that is not JSON (400)', () => request(server).post('/?action=otp_generate').type('json').send('{')],
  ])('are on %s', async (_what, send) => {
    expectHardened(await send());
  });
});
