import { codeVerified, issueVerifiedProof, requireVerified, vouches } from '../../src/domain/guard';
import { signProof, verifyProof } from '../../src/domain/proofs';
import type { PresentedKeys } from '../../src/core/context';
import { NO_KEYS } from '../../src/domain/keys';
import {
  fixture,
  identityApp,
  identityConfig,
  intercept,
  INTERNAL_KEY,
  paths,
  useNock,
} from '../actions/identity/support';

const uid = 'PNIa7Xk2mR0ssi';

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as { reason: string }).reason;
  }
  return 'passed';
};

describe('proof guard', () => {
  describe('binding', () => {
    it('with all, needs every identifier named to be vouched for', () => {
      expect(vouches({ kind: 'verified', uid, phone: '+393331234567' }, { uid, phone: '+393331234567' }, 'all')).toBe(
        true,
      );
      expect(vouches({ kind: 'verified', uid }, { uid, phone: '+393331234567' }, 'all')).toBe(false);
      expect(vouches({ kind: 'verified', email: 'A@Example.com' }, { email: 'a@example.com' }, 'all')).toBe(true);
      expect(vouches({ kind: 'verified', uid }, {}, 'all')).toBe(false);
    });

    it('with any, needs one identifier vouched for and none contradicted', () => {
      expect(
        vouches(
          { kind: 'verified', phone: '+393331234567' },
          { email: 'new@example.com', phone: '+393331234567' },
          'any',
        ),
      ).toBe(true);
      expect(
        vouches(
          { kind: 'verified', phone: '+393331234567', email: 'x@example.com' },
          { email: 'new@example.com', phone: '+393331234567' },
          'any',
        ),
      ).toBe(false);
      expect(vouches({ kind: 'verified', phone: '+393331234567' }, { email: 'new@example.com' }, 'any')).toBe(false);
    });
  });

  describe('issued proofs', () => {
    const { deps, proof } = identityApp();
    const ctx = { deps };

    it('keep the expiry of the proof they derive from', () => {
      const earlier = verifyProof(deps.secret, proof({ phone: '+393331234567' }, 60), deps.now());
      const derived = verifyProof(deps.secret, issueVerifiedProof(ctx, { linked: { uid } }, earlier), deps.now());
      expect(derived.exp).toBe(earlier.exp);
      expect(derived).toMatchObject({ kind: 'verified', phone: '+393331234567', uid, linked: ['uid'] });
    });

    it('start a new lifetime when a code was just verified', () => {
      const earlier = verifyProof(deps.secret, proof({ uid, email: 'a@example.com' }, 60), deps.now());
      const merged = verifyProof(
        deps.secret,
        issueVerifiedProof(ctx, { verified: { phone: '+393331234567' } }, earlier),
        deps.now(),
      );
      expect(merged.exp).toBe(Math.floor(deps.now() / 1000) + deps.config.security.proof_ttl_seconds);
      expect(merged).toMatchObject({ uid, email: 'a@example.com', phone: '+393331234567' });
    });

    it('never let a linked identifier replace a claimed one', () => {
      const earlier = verifyProof(deps.secret, proof({ email: 'verified@example.com' }), deps.now());
      const derived = verifyProof(
        deps.secret,
        issueVerifiedProof(ctx, { linked: { uid, email: 'other@example.com' } }, earlier),
        deps.now(),
      );
      expect(derived.email).toBe('verified@example.com');
      expect(codeVerified(derived, 'email')).toBe(true);
    });

    it('turn a linked identifier into a verified one when its code is verified later', () => {
      const earlier = verifyProof(
        deps.secret,
        issueVerifiedProof(ctx, { linked: { uid, email: 'a@example.com' } }),
        deps.now(),
      );
      expect(codeVerified(earlier, 'email')).toBe(false);
      const later = verifyProof(
        deps.secret,
        issueVerifiedProof(ctx, { verified: { email: 'a@example.com' } }, earlier),
        deps.now(),
      );
      expect(codeVerified(later, 'email')).toBe(true);
      expect(later.linked).toEqual(['uid']);
    });
  });

  describe('callers', () => {
    // The keys were compared where the request came in (src/domain/keys.ts, test/domain/keys.test.ts): the guard reads what held.
    const ctxFor = (config = identityConfig(), keys: Partial<PresentedKeys> = {}) => ({
      deps: identityApp(config).deps,
      header: () => undefined,
      keys: { ...NO_KEYS, ...keys },
    });

    it('trusts a caller whose internal key held, and no other key', () => {
      expect(reasonOf(() => requireVerified(ctxFor(identityConfig(), { internal: true }), { uid }))).toBe('passed');
      expect(reasonOf(() => requireVerified(ctxFor(identityConfig(), { funnel: true, metrics: true }), { uid }))).toBe(
        'proof_required',
      );
      expect(reasonOf(() => requireVerified(ctxFor(identityConfig()), { uid }))).toBe('proof_required');
    });

    it('lets everybody through when security.guard_primitives is false', () => {
      expect(
        reasonOf(() => requireVerified(ctxFor(identityConfig({ security: { guard_primitives: false } })), { uid })),
      ).toBe('passed');
    });
  });

  describe('over HTTP', () => {
    useNock();

    const guarded: Array<[string, Record<string, unknown>]> = [
      ['access_token', { uid }],
      ['get_user', { uid }],
      ['update_profile', { uid, city: 'Roma' }],
      ['doi_confirm', { uid }],
      ['register', { email: 'new@example.com', send_otp: false }],
      ['login', { email: 'mario.rossi@example.com' }],
    ];

    it.each(guarded)(
      '%s refuses with proof_required when the guard is on and nothing vouches',
      async (action, body) => {
        const { call } = identityApp();
        const res = await call(action, body);
        expect(res.body).toEqual({
          success: false,
          error: 'Verifica richiesta: conferma prima il codice ricevuto.',
          data: { reason: 'proof_required' },
        });
      },
    );

    it('accepts the proof from the x-verification-proof header', async () => {
      const { call, proof } = identityApp();
      intercept('POST', paths.token, 200, fixture('token'));
      const res = await call('access_token', { uid }, { 'x-verification-proof': proof({ uid }) });
      expect(res.body.success).toBe(true);
    });

    it('accepts the internal key instead of a proof', async () => {
      const { call } = identityApp();
      intercept('POST', paths.token, 200, fixture('token'));
      const res = await call('access_token', { uid }, { 'x-internal-key': INTERNAL_KEY });
      expect(res.body.success).toBe(true);
    });

    it('refuses a key that is not exactly the internal key', async () => {
      const { call } = identityApp();
      for (const key of [`${INTERNAL_KEY}x`, INTERNAL_KEY.slice(0, -1), INTERNAL_KEY.toUpperCase()]) {
        expect((await call('access_token', { uid }, { 'x-internal-key': key })).body.data).toEqual({
          reason: 'proof_required',
        });
      }
    });

    it('trusts nobody by key when security.internal_key is empty', async () => {
      const { call } = identityApp(identityConfig({ security: { internal_key: '' } }));
      expect((await call('access_token', { uid }, { 'x-internal-key': 'anything' })).body.data).toEqual({
        reason: 'proof_required',
      });
    });

    it('answers in full, with no proof, when the guard is off', async () => {
      const { call } = identityApp(identityConfig({ security: { guard_primitives: false } }));
      intercept('POST', paths.token, 200, fixture('token'));
      intercept('POST', paths.search, 200, fixture('user-search'));
      expect((await call('access_token', { uid })).body.success).toBe(true);
      expect((await call('search_user', { phone: '3331234567' })).body.meta.uid).toBe(uid);
    });

    it('refuses a proof of another kind with invalid_proof', async () => {
      const { call, deps } = identityApp();
      const pending = signProof(deps.secret, { kind: 'pending', uid }, 60, deps.now());
      const res = await call('access_token', { uid, proof: pending });
      expect(res.body.data).toMatchObject({ reason: 'invalid_proof', why: 'kind' });
    });
  });
});
