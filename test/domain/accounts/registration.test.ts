import { testCtx } from '../../support/context';
import { registerAccount } from '../../../src/domain/accounts/registration';
import { fakeIdentity } from './fake-identity';
import { createAbuseLimits } from '../../../src/domain/limits/abuse-limits';
import { createMemoryRateLimiter } from '../../../src/domain/limits/rate-limiter';
import { testConfig } from '../../support/app';

const jwt = (claims: Record<string, unknown>) => `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;
const account = { email: 'new@example.com', consents: { terms_conditions: true }, isMagicLinkSent: false };
const limits = createAbuseLimits(testConfig(), createMemoryRateLimiter(), Date.now);

describe('registerAccount', () => {
  it('registers and reads the new uid from the token the provider returned, without a lookup', async () => {
    const reply = { access_token: jwt({ sub: 'u-new' }) };
    const { identity, calls } = fakeIdentity({ register: async () => reply });
    await expect(registerAccount({ identity, limits }, testCtx, account)).resolves.toEqual({ reply, uid: 'u-new' });
    expect(calls).toEqual([['register', account]]);
  });

  it('looks the uid up by email when the provider returned no token, or one without a subject', async () => {
    for (const access_token of [null, jwt({ sub: '' }), 'not-a-jwt']) {
      const { identity, calls } = fakeIdentity({
        register: async () => ({ access_token }),
        findUserByEmail: async () => ({ uid: 'u-found' }),
      });
      await expect(registerAccount({ identity, limits }, testCtx, account)).resolves.toMatchObject({ uid: 'u-found' });
      expect(calls).toEqual([
        ['register', account],
        ['findUserByEmail', 'new@example.com'],
      ]);
    }
  });

  it('answers no uid when the provider does not list the email yet', async () => {
    const { identity } = fakeIdentity({ register: async () => ({}), findUserByEmail: async () => null });
    await expect(registerAccount({ identity, limits }, testCtx, account)).resolves.toEqual({
      reply: {},
      uid: undefined,
    });
  });

  it('looks nothing up when the registration is refused', async () => {
    const { identity, calls } = fakeIdentity({ register: async () => Promise.reject(new Error('refused')) });
    await expect(registerAccount({ identity, limits }, testCtx, account)).rejects.toThrow('refused');
    expect(calls.map(([method]) => method)).toEqual(['register']);
  });
});
