import { testConfig, testDeps } from '../../support/app';
import { issueAccessToken, storeReturnedToken, tokenResult } from '../../../src/domain/accounts/tokens';
import type { TokenCookie, TokenCookieOptions } from '../../../src/core/context';
import type { IdentityClient } from '../../../src/clients/identity';
import type { Deps } from '../../../src/domain/deps';
import { fakeIdentity } from './fake-identity';

let deps: Deps;
afterEach(() => deps?.close());

/** A request context over a fake provider, with a `__utp` cookie that remembers what was set. */
function request(answers: Partial<IdentityClient>, cookie?: string) {
  const { identity, calls } = fakeIdentity(answers);
  deps = testDeps(testConfig(), { identity });
  const set: Array<[string, TokenCookieOptions]> = [];
  const tokenCookie: TokenCookie = {
    get: () => cookie,
    set: (token, options) => {
      set.push([token, options]);
      cookie = token;
    },
  };
  return { ctx: { deps, tokenCookie, requestId: 'r1', trace: [] }, calls, set };
}

describe('issueAccessToken', () => {
  it('issues the uid’s token and stores it in the cookie, for as long as the provider says', async () => {
    const reply = { access_token: 'tok-1', expires_in: 3600 };
    const { ctx, calls, set } = request({ issueToken: async () => reply });
    await expect(issueAccessToken(ctx, 'u1', { stayLoggedIn: true, body: { aud: 'x' } })).resolves.toBe(reply);
    expect(calls).toEqual([['issueToken', 'u1', { aud: 'x' }]]);
    expect(set).toEqual([['tok-1', { stayLoggedIn: true, expiresIn: 3600 }]]);
  });

  it('sets no cookie when the provider refuses the token', async () => {
    const { ctx, set } = request({ issueToken: async () => Promise.reject(new Error('refused')) });
    await expect(issueAccessToken(ctx, 'u1', { stayLoggedIn: false })).rejects.toThrow('refused');
    expect(set).toEqual([]);
  });
});

describe('storeReturnedToken', () => {
  it('stores a new token the provider returned', () => {
    const { ctx, set } = request({}, 'old');
    expect(storeReturnedToken(ctx, { access_token: 'new', expires_in: 60 }, false)).toBe(true);
    expect(set).toEqual([['new', { stayLoggedIn: false, expiresIn: 60 }]]);
  });

  it('stores nothing when there is no token, or the cookie already holds it', () => {
    const { ctx, set } = request({}, 'same');
    expect(storeReturnedToken(ctx, { access_token: null }, true)).toBe(false);
    expect(storeReturnedToken(ctx, {}, true)).toBe(false);
    expect(storeReturnedToken(ctx, { access_token: 'same' }, true)).toBe(false);
    expect(set).toEqual([]);
  });
});

describe('tokenResult', () => {
  it('answers the contract’s shape, with its defaults for what the provider left out', () => {
    expect(tokenResult({})).toEqual({
      access_token: null,
      token_type: 'Bearer',
      refresh_token: null,
      expires_in: null,
      email_confirmation_required: false,
    });
    expect(
      tokenResult({
        access_token: 't',
        token_type: 'JWT',
        refresh_token: 'r',
        expires_in: 5,
        email_confirmation_required: true,
        pub_id: 'p',
      }),
    ).toEqual({
      access_token: 't',
      token_type: 'JWT',
      refresh_token: 'r',
      expires_in: 5,
      email_confirmation_required: true,
    });
  });
});
