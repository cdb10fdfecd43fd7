import { testCtx } from '../support/context';
import pino from 'pino';
import { createIdentityClient, type IdentityClient } from '../../src/clients/identity';
import { jwtSubject } from '../../src/clients/identity/jwt';
import { signProof, verifyProof } from '../../src/domain/proofs';
import { createIdentityFake, SANDBOX_PASSWORD, sandboxSeedUsers } from '../../src/sandbox/identity';
import { useSandboxApp } from '../support/sandbox-app';

const log = pino({ level: 'silent' });
const [mario, giulia, luca] = sandboxSeedUsers as [
  (typeof sandboxSeedUsers)[number],
  (typeof sandboxSeedUsers)[number],
  (typeof sandboxSeedUsers)[number],
];

describe('sandbox identity provider', () => {
  const app = useSandboxApp([createIdentityFake]);
  let client: IdentityClient;
  const proof = (claims: Record<string, unknown>) =>
    signProof(app.deps.secret, { kind: 'verified', ...claims }, 900, app.deps.now());

  beforeAll(() => {
    client = createIdentityClient(app.sandbox.config, log);
  });

  it('points the identity configuration at the fake', () => {
    expect(app.sandbox.config.identity.base_url).toBe(`${app.sandbox.baseUrl}/idp`);
    expect(app.sandbox.config.identity.aid).not.toBe('');
  });

  describe('answers every call in shapes the client guards accept', () => {
    it('users/get and user/get, found and not found', async () => {
      expect(await client.findUserByEmail(testCtx, mario.email)).toMatchObject({
        uid: mario.uid,
        email_confirmation_state: 'confirmed',
      });
      expect(await client.findUserByEmail(testCtx, 'nessuno@example.com')).toBeNull();
      expect(await client.getUser(testCtx, giulia.uid)).toMatchObject({
        uid: giulia.uid,
        custom_fields: [{ field_name: 'city', value: 'Torino' }],
      });
      expect(await client.getUser(testCtx, 'PNInobody')).toBeNull();
    });

    it('the phone search, honouring the custom_fields filter', async () => {
      expect((await client.searchByPhone(testCtx, '393331234567')).users?.map((u) => u.uid)).toEqual([mario.uid]);
      expect((await client.searchByPhone(testCtx, '393330000000')).users).toEqual([]);
    });

    it('login with and without password, refusing a wrong password and an unknown email alike', async () => {
      const passwordless = await client.login(testCtx, { email: giulia.email, stayLoggedIn: false });
      expect(jwtSubject(passwordless.access_token)).toBe(giulia.uid);
      expect(passwordless.access_token?.split('.')).toHaveLength(3);
      expect(
        (await client.login(testCtx, { email: giulia.email, password: SANDBOX_PASSWORD, stayLoggedIn: true }))
          .refresh_token,
      ).toEqual(expect.any(String));
      await expect(
        client.login(testCtx, { email: giulia.email, password: 'wrong', stayLoggedIn: false }),
      ).rejects.toMatchObject({ reason: 'invalid_credentials' });
      await expect(
        client.login(testCtx, { email: 'nessuno@example.com', password: SANDBOX_PASSWORD, stayLoggedIn: false }),
      ).rejects.toMatchObject({ reason: 'invalid_credentials' });
    });

    it('the publisher token, the access list with that token, and the refusal of a foreign token', async () => {
      const { access_token } = await client.issueToken(testCtx, mario.uid);
      expect((await client.accessList(testCtx, access_token)).data).toHaveLength(2);
      await expect(client.accessList(testCtx, 'a.b.c')).rejects.toMatchObject({ reason: 'invalid_token' });
    });

    it('the refresh, once per refresh token', async () => {
      const { refresh_token } = await client.login(testCtx, { email: mario.email, stayLoggedIn: true });
      const refreshed = await client.refreshToken(testCtx, refresh_token!);
      expect(jwtSubject(refreshed.access_token)).toBe(mario.uid);
      await expect(client.refreshToken(testCtx, refresh_token!)).rejects.toMatchObject({ reason: 'invalid_token' });
    });

    it('register, then DOI confirmation of the new account', async () => {
      const registered = await client.register(testCtx, { email: 'nuova.utente@example.com', isMagicLinkSent: false });
      const uid = jwtSubject(registered.access_token)!;
      expect((await client.findUserByEmail(testCtx, 'nuova.utente@example.com'))?.email_confirmation_state).toBe(
        'unconfirmed',
      );
      await client.confirmDoi(testCtx, uid);
      expect((await client.findUserByEmail(testCtx, 'nuova.utente@example.com'))?.email_confirmation_state).toBe(
        'confirmed',
      );
      await expect(client.register(testCtx, { email: mario.email, isMagicLinkSent: false })).rejects.toMatchObject({
        reason: 'upstream_error',
      });
    });

    it('the seeded unconfirmed user', async () => {
      expect(await client.findUserByEmail(testCtx, luca.email)).toMatchObject({
        email_confirmation_state: 'unconfirmed',
      });
    });
  });

  describe('through the service actions', () => {
    it('search_user with a phone proof finds the seeded user and hands a proof that opens get_user', async () => {
      const searched = await app.call('search_user', {
        phone: '+39 333 123 4567',
        proof: proof({ phone: '+393331234567' }),
      });
      expect(searched.body.meta).toEqual({
        found: true,
        count: 1,
        uid: mario.uid,
        email: mario.email,
        has_otp_phone: true,
        otp_phone: '393331234567',
      });
      const profile = await app.call('get_user', { uid: mario.uid, proof: searched.body.data.proof });
      expect(profile.body.data).toMatchObject({
        uid: mario.uid,
        first_name: 'Mario',
        city: 'Milano',
        has_otp_phone: true,
        profile_complete: true,
      });
    });

    it('update_profile changes the stored user', async () => {
      const res = await app.call('update_profile', {
        uid: giulia.uid,
        first_name: 'Giulia Maria',
        birth_date: '1992-07-01',
        proof: proof({ uid: giulia.uid }),
      });
      expect(res.body.data.calls).toEqual(['identity', 'custom']);
      const profile = await app.call('get_user', { uid: giulia.uid, proof: proof({ uid: giulia.uid }) });
      expect(profile.body.data).toMatchObject({ first_name: 'Giulia Maria', birth_date: '1992-07-01', city: 'Torino' });
    });

    it('update_profile refuses a phone another seeded user holds', async () => {
      const res = await app.call('update_profile', {
        uid: giulia.uid,
        otp_phone: '3331234567',
        proof: proof({ uid: giulia.uid, phone: '+393331234567' }),
      });
      expect(res.body).toMatchObject({
        success: false,
        error: 'Telefono già registrato su un altro account',
        data: { reason: 'phone_taken' },
      });
    });

    it('register then access_token with the proof register returned sets __utp', async () => {
      const registered = await app.call('register', {
        email: 'terza.utente@example.com',
        send_otp: false,
        proof: proof({ email: 'terza.utente@example.com' }),
      });
      const claims = verifyProof(app.deps.secret, registered.body.data.proof, app.deps.now());
      const token = await app.call('access_token', { uid: claims.uid, proof: registered.body.data.proof });
      expect(token.body.success).toBe(true);
      expect(token.headers['set-cookie']?.[0]).toMatch(/^__utp=[\w-]+\.[\w-]+\.[\w-]+; path=\//);
    });
  });
});
