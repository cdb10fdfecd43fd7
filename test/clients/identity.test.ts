import { testCtx } from '../support/context';
import nock from 'nock';
import pino from 'pino';
import { createIdentityClient, type IdentityClient } from '../../src/clients/identity';
import { messageOf } from '../../src/core/errors';
import type { Config } from '../../src/core/config/schema';
import {
  AID,
  API_TOKEN,
  BASE,
  fixture,
  formOf,
  identityConfig,
  intercept,
  paths,
  useNock,
} from '../actions/identity/support';

const log = pino({ level: 'silent' });
const client = (config: Config = identityConfig()): IdentityClient => createIdentityClient(config, log);

const reasonOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (err) {
    return {
      reason: (err as { reason?: string }).reason,
      message: (err as Error).message,
      data: (err as { data?: Record<string, unknown> }).data,
    };
  }
  throw new Error('expected a failure');
};

describe('identity client', () => {
  useNock();

  describe('login', () => {
    it('sends the passwordless login with the empty-quoted password in the query and the strings true/false in the JSON body', async () => {
      const { scope, seen } = intercept('POST', paths.login, 200, fixture('login'));
      const reply = await client().login(testCtx, { email: 'mario.rossi@example.com', stayLoggedIn: false });
      expect(scope.isDone()).toBe(true);
      expect(seen[0]!.query).toEqual({ aid: AID, email: 'mario.rossi@example.com', password: '""' });
      expect(seen[0]!.headers['content-type']).toMatch(/^application\/json/);
      expect(seen[0]!.headers.authorization).toBe(`Bearer ${API_TOKEN}`);
      expect(seen[0]!.body).toEqual({ aid: AID, email: 'mario.rossi@example.com', stay_logged_in: 'false' });
      expect(reply.access_token).toBe(fixture('login').access_token);
      expect(reply.pub_id).toBe('pub_3f2a9c1e');
    });

    it('sends the password in the query and the JSON body on the password branch', async () => {
      const { seen } = intercept('POST', paths.login, 200, fixture('login'));
      await client().login(testCtx, { email: 'mario.rossi@example.com', password: 's3cret', stayLoggedIn: true });
      expect(seen[0]!.query.password).toBe('s3cret');
      expect(seen[0]!.body).toEqual({
        aid: AID,
        email: 'mario.rossi@example.com',
        stay_logged_in: 'true',
        password: 's3cret',
      });
    });

    it('treats an error_code_list under HTTP 200 on the passwordless login as a refusal with the provider words', async () => {
      const { scope } = intercept('POST', paths.login, 200, fixture('login-unknown-email'));
      const failure = await reasonOf(
        client().login(testCtx, { email: 'mario.rossi@example.com', stayLoggedIn: false }),
      );
      expect(scope.isDone()).toBe(true);
      expect(failure.reason).toBe('upstream_error');
      expect(failure.message).toBe(messageOf('upstream_error', { service: 'di identità' }));
      expect(failure.data?.provider_errors).toEqual([{ code: '404', message: 'User not found' }]);
    });

    it.each([
      ['HTTP 200 with error_code_list', 200, fixture('error-code-list')],
      ['HTTP 200 with error_code_list for an unknown email', 200, fixture('login-unknown-email')],
      ['HTTP 400', 400, fixture('error-code-list')],
      ['HTTP 401', 401, ''],
      ['HTTP 404', 404, fixture('login-unknown-email')],
      ['HTTP 422 with a text body', 422, 'Unprocessable'],
    ])(
      'turns %s on the password login into invalid_credentials, with nothing of the provider in it',
      async (_what, status, reply) => {
        const { scope } = intercept('POST', paths.login, status, reply);
        const failure = await reasonOf(
          client().login(testCtx, { email: 'mario.rossi@example.com', password: 'wrong', stayLoggedIn: false }),
        );
        expect(scope.isDone()).toBe(true);
        expect(failure).toEqual({ reason: 'invalid_credentials', message: 'Email o password non corretti.', data: {} });
      },
    );

    it.each([429, 500, 502])('keeps HTTP %i on the password login an upstream_error', async (status) => {
      const { scope } = intercept('POST', paths.login, status, fixture('error-code-list'));
      const failure = await reasonOf(
        client().login(testCtx, { email: 'mario.rossi@example.com', password: 'wrong', stayLoggedIn: false }),
      );
      expect(scope.isDone()).toBe(true);
      expect(failure).toMatchObject({
        reason: 'upstream_error',
        data: { upstream: 'identity', endpoint: 'login', upstream_status: status },
      });
    });

    it('keeps an unparseable 2xx reply on the password login an upstream_error', async () => {
      const { scope } = intercept('POST', paths.login, 200, { access_token: 42 });
      const failure = await reasonOf(
        client().login(testCtx, { email: 'mario.rossi@example.com', password: 's3cret', stayLoggedIn: false }),
      );
      expect(scope.isDone()).toBe(true);
      expect(failure).toMatchObject({ reason: 'upstream_error', data: { upstream: 'identity', endpoint: 'login' } });
    });

    it('answers the token reply of an accepted password', async () => {
      const { scope } = intercept('POST', paths.login, 200, fixture('login'));
      const reply = await client().login(testCtx, {
        email: 'mario.rossi@example.com',
        password: 's3cret',
        stayLoggedIn: false,
      });
      expect(scope.isDone()).toBe(true);
      expect(reply).toEqual(fixture('login'));
    });
  });

  it('sends the passwordless registration with query strings and a JSON body', async () => {
    const { scope, seen } = intercept('POST', paths.register, 200, fixture('register'));
    const reply = await client().register(testCtx, {
      email: 'nuovo.utente@example.com',
      consents: { terms_conditions: true },
      isMagicLinkSent: false,
    });
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.query).toEqual({
      aid: AID,
      email: 'nuovo.utente@example.com',
      consents: '{"terms_conditions":true}',
      is_magic_link_sent: 'false',
      is_passwordless: 'true',
    });
    expect(seen[0]!.body).toEqual({
      password: '',
      is_passwordless: true,
      is_magic_link_sent: false,
      email: 'nuovo.utente@example.com',
      aid: AID,
    });
    expect(reply).toMatchObject({ pub_id: 'pub_8b1d0e47', registration: true });
  });

  it('confirms DOI with CONFIRMED in the query and lower-case confirmed in the JSON body', async () => {
    const { scope, seen } = intercept('POST', paths.doi, 200, fixture('doi-status'));
    expect(await client().confirmDoi(testCtx, 'PNIa7Xk2mR0ssi')).toEqual({});
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.query).toEqual({ aid: AID, uid: 'PNIa7Xk2mR0ssi', email_confirmation_state: 'CONFIRMED' });
    expect(seen[0]!.body).toEqual({ aid: AID, uid: 'PNIa7Xk2mR0ssi', email_confirmation_state: 'confirmed' });
  });

  describe('users/get by email', () => {
    it('sends aid, api_token and email in the query, no body, and parses the flat profile', async () => {
      const { scope, seen } = intercept('POST', paths.usersGet, 200, fixture('users-get'));
      const user = await client().findUserByEmail(testCtx, 'mario.rossi@example.com');
      expect(scope.isDone()).toBe(true);
      expect(seen[0]!.query).toEqual({ aid: AID, api_token: API_TOKEN, email: 'mario.rossi@example.com' });
      expect(seen[0]!.body).toBe('');
      expect(user).toMatchObject({
        uid: 'PNIa7Xk2mR0ssi',
        email_confirmation_state: 'confirmed',
        custom_fields: [{ name: 'otp_phone', value: '393331234567' }],
      });
    });

    it('answers null when the provider says the user is not found', async () => {
      intercept('POST', paths.usersGet, 200, fixture('users-get-not-found'));
      expect(await client().findUserByEmail(testCtx, 'nessuno@example.com')).toBeNull();
    });

    it('answers null on HTTP 404', async () => {
      intercept('POST', paths.usersGet, 404, { message: 'no such user' });
      expect(await client().findUserByEmail(testCtx, 'nessuno@example.com')).toBeNull();
    });

    it('treats any other error_code_list as a refusal', async () => {
      intercept('POST', paths.usersGet, 200, { error_code_list: [{ code: '403', message: 'Access denied' }] });
      expect((await reasonOf(client().findUserByEmail(testCtx, 'mario.rossi@example.com'))).reason).toBe(
        'upstream_error',
      );
    });
  });

  describe('v3 user/get', () => {
    it('sends aid, api_token and uid form-urlencoded and parses the user', async () => {
      const { scope, seen } = intercept('POST', paths.userGet, 200, fixture('user-get'));
      const user = await client().getUser(testCtx, 'PNIa7Xk2mR0ssi');
      expect(scope.isDone()).toBe(true);
      expect(seen[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(formOf(seen[0]!)).toEqual({ aid: AID, api_token: API_TOKEN, uid: 'PNIa7Xk2mR0ssi' });
      expect(seen[0]!.query).toEqual({});
      expect(user?.custom_fields).toHaveLength(3);
    });

    it('answers null on code 2004 (user not found)', async () => {
      intercept('POST', paths.userGet, 200, fixture('user-get-not-found'));
      expect(await client().getUser(testCtx, 'PNInobody')).toBeNull();
    });

    it('treats any other non-zero code under HTTP 200 as a refusal', async () => {
      intercept('POST', paths.userGet, 200, fixture('v3-error'));
      const failure = await reasonOf(client().getUser(testCtx, 'PNIa7Xk2mR0ssi'));
      expect(failure.reason).toBe('upstream_error');
      expect(failure.data?.provider_errors).toEqual([{ code: 403, message: 'Access denied' }]);
    });
  });

  it('searches otp_phone form-urlencoded with source CF, offset 0, limit 100 and the custom_fields JSON list', async () => {
    const { scope, seen } = intercept('POST', paths.search, 200, fixture('user-search'));
    const reply = await client().searchByPhone(testCtx, '393331234567');
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = formOf(seen[0]!);
    expect(form).toEqual({
      api_token: API_TOKEN,
      aid: AID,
      source: 'CF',
      offset: '0',
      limit: '100',
      custom_fields: expect.any(String),
    });
    expect(JSON.parse(form.custom_fields!)).toEqual([
      { field_name: 'otp_phone', data_type: 'NUMBER', condition: { type: 'EQUAL', value: '393331234567' } },
    ]);
    expect(reply.users).toHaveLength(1);
    expect(reply.total).toBe(1);
  });

  it('updates identity fields form-urlencoded with aid, api_token and uid in the query', async () => {
    const { scope, seen } = intercept('POST', paths.update, 200, fixture('user-update'));
    const reply = await client().updateIdentity(testCtx, 'PNIa7Xk2mR0ssi', {
      first_name: 'Mario',
      last_name: 'Bianchi',
    });
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.query).toEqual({ aid: AID, api_token: API_TOKEN, uid: 'PNIa7Xk2mR0ssi' });
    expect(seen[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(formOf(seen[0]!)).toEqual({ first_name: 'Mario', last_name: 'Bianchi' });
    expect(reply.user.last_name).toBe('Bianchi');
  });

  it('updates custom fields as JSON with otp_phone as a number', async () => {
    const { scope, seen } = intercept('POST', paths.update, 200, fixture('user-update'));
    await client().updateCustom(testCtx, 'PNIa7Xk2mR0ssi', {
      city: 'Roma',
      birth_date: '1985-04-12',
      otp_phone: '393331234567',
    });
    expect(scope.isDone()).toBe(true);
    expect(seen[0]!.query).toEqual({ aid: AID, api_token: API_TOKEN, uid: 'PNIa7Xk2mR0ssi' });
    expect(seen[0]!.headers['content-type']).toMatch(/^application\/json/);
    expect(seen[0]!.body).toEqual({ city: 'Roma', birth_date: '1985-04-12', otp_phone: 393331234567 });
  });

  it('answers user_not_found when an update meets code 2004', async () => {
    intercept('POST', paths.update, 200, fixture('user-get-not-found'));
    const failure = await reasonOf(client().updateCustom(testCtx, 'PNInobody', { city: 'Roma' }));
    expect(failure).toMatchObject({ reason: 'user_not_found', message: 'Utente non trovato.' });
  });

  describe('publisher token', () => {
    it('sends api_token, aid and uid in the query and no body when none is given', async () => {
      const { scope, seen } = intercept('POST', paths.token, 200, fixture('token'));
      const reply = await client().issueToken(testCtx, 'PNIa7Xk2mR0ssi');
      expect(scope.isDone()).toBe(true);
      expect(seen[0]!.query).toEqual({ api_token: API_TOKEN, aid: AID, uid: 'PNIa7Xk2mR0ssi' });
      expect(seen[0]!.body).toBe('');
      expect(reply.access_token).toBe(fixture('token').access_token);
    });

    it('passes the optional JSON body as given', async () => {
      const { seen } = intercept('POST', paths.token, 200, fixture('token'));
      await client().issueToken(testCtx, 'PNIa7Xk2mR0ssi', { source: 'app', ttl: 3600 });
      expect(seen[0]!.headers['content-type']).toMatch(/^application\/json/);
      expect(seen[0]!.body).toEqual({ source: 'app', ttl: 3600 });
    });

    it('treats a reply without access_token as a bad reply', async () => {
      intercept('POST', paths.token, 200, { token_type: 'Bearer' });
      expect((await reasonOf(client().issueToken(testCtx, 'PNIa7Xk2mR0ssi'))).reason).toBe('upstream_error');
    });
  });

  describe('refresh', () => {
    it('sends client_id (the aid), grant_type and refresh_token form-urlencoded, with no secret and no publisher key', async () => {
      const { scope, seen } = intercept('POST', paths.refresh, 200, fixture('refresh'));
      const reply = await client().refreshToken(testCtx, 'RTq8Zr1mXfT0bW2nC5yE7uA9');
      expect(scope.isDone()).toBe(true);
      expect(seen[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(formOf(seen[0]!)).toEqual({
        client_id: AID,
        grant_type: 'refresh_token',
        refresh_token: 'RTq8Zr1mXfT0bW2nC5yE7uA9',
      });
      expect(seen[0]!.query).toEqual({});
      expect(seen[0]!.headers.authorization).toBeUndefined();
      expect(reply).toMatchObject({
        token_type: 'Bearer',
        refresh_token: 'RTw2Fs9hJ4kD1mN6qZ8cV3xB',
        expires_in: 2592000,
      });
    });

    it('answers invalid_token when the provider refuses the refresh token', async () => {
      intercept('POST', paths.refresh, 400, fixture('refresh-invalid-grant'));
      expect(await reasonOf(client().refreshToken(testCtx, 'expired'))).toMatchObject({
        reason: 'invalid_token',
        message: 'Sessione scaduta o non valida. Accedi di nuovo.',
      });
    });
  });

  describe('access list', () => {
    it('sends a GET with aid in the query and the user token as Bearer', async () => {
      const { scope, seen } = intercept('GET', paths.accessList, 200, fixture('access-list'));
      const reply = await client().accessList(testCtx, 'user.jwt.token');
      expect(scope.isDone()).toBe(true);
      expect(seen[0]!.query).toEqual({ aid: AID });
      expect(seen[0]!.headers.authorization).toBe('Bearer user.jwt.token');
      expect(reply.data).toHaveLength(2);
    });

    it('accepts the list under accesses as well as data', async () => {
      const { data, ...rest } = fixture<{ data: unknown[] }>('access-list');
      intercept('GET', paths.accessList, 200, { ...rest, accesses: data });
      expect((await client().accessList(testCtx, 'user.jwt.token')).accesses).toHaveLength(2);
    });

    it('answers invalid_token on HTTP 401', async () => {
      intercept('GET', paths.accessList, 401, { code: 401, message: 'Unauthorized' });
      expect((await reasonOf(client().accessList(testCtx, 'stale'))).reason).toBe('invalid_token');
    });
  });

  describe('URLs', () => {
    it('uses a full-URL override key instead of base_url + path', async () => {
      const scope = nock('https://users.other.test')
        .post('/custom/users-get')
        .query(true)
        .reply(200, fixture('users-get'));
      const config = identityConfig({ identity: { users_get_url: 'https://users.other.test/custom/users-get' } });
      expect(await client(config).findUserByEmail(testCtx, 'mario.rossi@example.com')).toMatchObject({
        uid: 'PNIa7Xk2mR0ssi',
      });
      expect(scope.isDone()).toBe(true);
    });

    it('answers not_configured, without any call, when neither the base nor the override is set', async () => {
      const config = identityConfig({ identity: { base_url: '' } });
      expect((await reasonOf(client(config).getUser(testCtx, 'PNIa7Xk2mR0ssi'))).reason).toBe('not_configured');
    });

    it('trims a trailing slash of base_url', async () => {
      const { scope } = intercept('POST', paths.userGet, 200, fixture('user-get'));
      await client(identityConfig({ identity: { base_url: `${BASE}/` } })).getUser(testCtx, 'PNIa7Xk2mR0ssi');
      expect(scope.isDone()).toBe(true);
    });
  });
});
