import type Router from '@koa/router';
import type { Context } from 'koa';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import accessListFixture from './fixtures/identity/access-list.json';
import doiFixture from './fixtures/identity/doi-status.json';
import errorCodeListFixture from './fixtures/identity/error-code-list.json';
import loginFixture from './fixtures/identity/login.json';
import refreshFixture from './fixtures/identity/refresh.json';
import invalidGrantFixture from './fixtures/identity/refresh-invalid-grant.json';
import registerFixture from './fixtures/identity/register.json';
import tokenFixture from './fixtures/identity/token.json';
import userGetFixture from './fixtures/identity/user-get.json';
import userNotFoundFixture from './fixtures/identity/user-get-not-found.json';
import searchFixture from './fixtures/identity/user-search.json';
import updateFixture from './fixtures/identity/user-update.json';
import usersGetFixture from './fixtures/identity/users-get.json';
import usersGetNotFoundFixture from './fixtures/identity/users-get-not-found.json';
import v3ErrorFixture from './fixtures/identity/v3-error.json';
import { identityPaths } from '../clients/identity/urls';
import type { SandboxFake } from './fake';

/*
 * A fake of the identity provider, in memory, answering every identity call of docs/contract.md in the
 * provider's shapes. Every reply is a recorded example of src/sandbox/fixtures/identity with this
 * fake's values put in, so the client's guards (tested on the same files) parse what it says.
 * Tokens are JWT-format (HS256 with a per-run key): the access list accepts only tokens it issued.
 */

const PREFIX = '/idp';
const SANDBOX_AID = 'sandboxaid';
const SANDBOX_API_TOKEN = 'sandbox-api-token';
/** Every seeded user's password, for the login with password. */
export const SANDBOX_PASSWORD = 'sandbox-password';
const TOKEN_SECONDS = 30 * 24 * 3600;

interface SandboxUser {
  uid: string;
  email: string;
  first_name: string;
  last_name: string;
  email_confirmation_state: 'confirmed' | 'unconfirmed';
  /** Custom fields as the provider stores them: strings. */
  custom: Partial<Record<'otp_phone' | 'city' | 'birth_date', string>>;
  password?: string;
}

/**
 * The uid the fake gives an email it registers: the same after every reset, so a registration in
 * /flows's examples (docs/journeys/examples.json) answers the uid it shows. A fake's, never a
 * provider's: the real one chooses.
 */
export const sandboxUidFor = (email: string): string =>
  `PNI${createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 11)}`;

/**
 * A user with a phone, one without, one whose email is not confirmed yet, and two accounts made
 * by a phone registration whose email was never confirmed (step 65): Elena's phone is hers,
 * Francesca's email was typed by someone else, whose phone is on it.
 */
export const sandboxSeedUsers: readonly SandboxUser[] = [
  {
    uid: userGetFixture.user.uid,
    email: 'mario.rossi@example.com',
    first_name: 'Mario',
    last_name: 'Rossi',
    email_confirmation_state: 'confirmed',
    custom: { otp_phone: '393331234567', city: 'Milano', birth_date: '1985-04-12' },
    password: SANDBOX_PASSWORD,
  },
  {
    uid: 'PNIg1ul1aB1anc',
    email: 'giulia.bianchi@example.com',
    first_name: 'Giulia',
    last_name: 'Bianchi',
    email_confirmation_state: 'confirmed',
    custom: { city: 'Torino' },
    password: SANDBOX_PASSWORD,
  },
  {
    uid: 'PNIluc4V3rd1nc',
    email: 'luca.verdi@example.com',
    first_name: 'Luca',
    last_name: 'Verdi',
    email_confirmation_state: 'unconfirmed',
    custom: {},
    password: SANDBOX_PASSWORD,
  },
  {
    uid: 'PNIel3n4N3r1xx',
    email: 'elena.neri@example.com',
    first_name: 'Elena',
    last_name: 'Neri',
    email_confirmation_state: 'unconfirmed',
    custom: { otp_phone: '393336660606' },
    password: SANDBOX_PASSWORD,
  },
  {
    uid: 'PNIfr4nc3sc4Gl',
    email: 'francesca.galli@example.com',
    first_name: 'Francesca',
    last_name: 'Galli',
    email_confirmation_state: 'unconfirmed',
    custom: { otp_phone: '393336660707' },
    password: SANDBOX_PASSWORD,
  },
];

const customTemplates = userGetFixture.user.custom_fields;

function v3User(user: SandboxUser) {
  const custom_fields = customTemplates
    .filter((field) => user.custom[field.field_name as keyof SandboxUser['custom']] !== undefined)
    .map((field) => ({ ...field, value: user.custom[field.field_name as keyof SandboxUser['custom']]! }));
  const names = {
    first_name: user.first_name,
    last_name: user.last_name,
    personal_name: `${user.first_name} ${user.last_name}`.trim(),
  };
  return { ...userGetFixture.user, uid: user.uid, email: user.email, ...names, custom_fields };
}

/** users/get answers a flat profile whose custom fields may be partial (only the phone here), as recorded. */
function identityProfile(user: SandboxUser) {
  const custom_fields = user.custom.otp_phone
    ? [{ ...usersGetFixture.custom_fields[0], value: user.custom.otp_phone }]
    : [];
  return {
    ...usersGetFixture,
    uid: user.uid,
    email: user.email,
    first_name: user.first_name,
    last_name: user.last_name,
    email_confirmation_state: user.email_confirmation_state,
    custom_fields,
  };
}

const errorList = (message: string, code = '400') => ({
  error_code_list: [{ ...errorCodeListFixture.error_code_list[0], code, message, field: undefined }],
});
const v3Error = (code: number, message: string) => ({ ...v3ErrorFixture, code, message });

export function createIdentityFake(): SandboxFake {
  const seeded = () => sandboxSeedUsers.map((u): [string, SandboxUser] => [u.uid, { ...u, custom: { ...u.custom } }]);
  const users = new Map<string, SandboxUser>(seeded());
  const refreshTokens = new Map<string, string>();
  const key = randomBytes(32);

  const byEmail = (email: unknown) =>
    typeof email === 'string'
      ? [...users.values()].find((u) => u.email.toLowerCase() === email.toLowerCase())
      : undefined;
  const byUid = (uid: unknown) => (typeof uid === 'string' ? users.get(uid) : undefined);

  const sign = (body: string) => createHmac('sha256', key).update(body).digest('base64url');
  function jwt(user: SandboxUser): string {
    const now = Math.floor(Date.now() / 1000);
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: 'sandbox', sub: user.uid, aud: SANDBOX_AID, email: user.email, email_confirmed: user.email_confirmation_state === 'confirmed', iat: now, exp: now + TOKEN_SECONDS, jti: randomBytes(6).toString('hex') })}`;
    return `${body}.${sign(body)}`;
  }
  function tokenOwner(token: string): SandboxUser | undefined {
    const [header, payload, signature] = token.split('.');
    if (!header || !payload || !signature) return undefined;
    const expected = Buffer.from(sign(`${header}.${payload}`));
    if (expected.length !== Buffer.from(signature).length || !timingSafeEqual(expected, Buffer.from(signature)))
      return undefined;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: string; exp?: number };
    return (claims.exp ?? 0) * 1000 > Date.now() ? byUid(claims.sub) : undefined;
  }
  function tokens(user: SandboxUser) {
    const refresh_token = randomBytes(18).toString('base64url');
    refreshTokens.set(refresh_token, user.uid);
    return { access_token: jwt(user), refresh_token, expires_in: TOKEN_SECONDS };
  }

  const body = (ctx: Context) => (ctx.request.body ?? {}) as Record<string, unknown>;
  const bearer = (ctx: Context) => /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
  /** Publisher calls must carry the application id and the publisher key, as the real provider demands. */
  const publisherOk = (ctx: Context, apiToken: unknown) =>
    ctx.query.aid === SANDBOX_AID && apiToken === SANDBOX_API_TOKEN;
  const v3Ok = (ctx: Context) => body(ctx).aid === SANDBOX_AID && body(ctx).api_token === SANDBOX_API_TOKEN;
  const route = (path: string) => `${PREFIX}${path}`;

  return {
    // The seeded people as they were at start: a walkthrough that registered Sara or gave Giulia a phone can be walked again.
    reset() {
      users.clear();
      for (const [uid, user] of seeded()) users.set(uid, user);
      refreshTokens.clear();
    },
    name: 'identity',
    mount(router: Router) {
      router.post(route(identityPaths.login), (ctx) => {
        if (!publisherOk(ctx, bearer(ctx))) return void (ctx.body = errorList('Access denied', '403'));
        const user = byEmail(ctx.query.email);
        const password = ctx.query.password;
        // The contract: the query's password is `""` for the passwordless login.
        const passwordless = password === '""';
        // With a password, an unknown email, an account without a password and a wrong password
        // get the one recorded refusal (HTTP 200 + error_code_list), so the service's single
        // invalid_credentials answer is exercised against a provider that does not tell them apart.
        if (!passwordless && (!user?.password || password !== user.password))
          return void (ctx.body = errorCodeListFixture);
        if (!user) return void (ctx.body = errorList('User not found', '404'));
        ctx.body = {
          ...loginFixture,
          ...tokens(user),
          email_confirmation_required: user.email_confirmation_state !== 'confirmed',
        };
      });

      router.post(route(identityPaths.register), (ctx) => {
        if (!publisherOk(ctx, bearer(ctx))) return void (ctx.body = errorList('Access denied', '403'));
        const email = ctx.query.email;
        if (typeof email !== 'string' || !email.includes('@')) return void (ctx.body = errorList('Email is not valid'));
        if (byEmail(email)) return void (ctx.body = errorList('Email already registered', '409'));
        const user: SandboxUser = {
          uid: sandboxUidFor(email),
          email,
          first_name: '',
          last_name: '',
          email_confirmation_state: 'unconfirmed',
          custom: {},
        };
        users.set(user.uid, user);
        ctx.body = { ...registerFixture, ...tokens(user), pub_id: `pub_${randomBytes(4).toString('hex')}` };
      });

      router.post(route(identityPaths.doiStatus), (ctx) => {
        if (!publisherOk(ctx, bearer(ctx))) return void (ctx.body = errorList('Access denied', '403'));
        const user = byUid(ctx.query.uid);
        if (!user) return void (ctx.body = errorList('User not found', '404'));
        if (String(body(ctx).email_confirmation_state).toLowerCase() === 'confirmed')
          user.email_confirmation_state = 'confirmed';
        ctx.body = doiFixture;
      });

      router.post(route(identityPaths.usersGet), (ctx) => {
        if (!publisherOk(ctx, ctx.query.api_token)) return void (ctx.body = errorList('Access denied', '403'));
        const user = byEmail(ctx.query.email);
        ctx.body = user ? identityProfile(user) : usersGetNotFoundFixture;
      });

      router.post(route(identityPaths.userGet), (ctx) => {
        if (!v3Ok(ctx)) return void (ctx.body = v3ErrorFixture);
        const user = byUid(body(ctx).uid);
        ctx.body = user ? { ...userGetFixture, user: v3User(user) } : userNotFoundFixture;
      });

      router.post(route(identityPaths.userSearch), (ctx) => {
        if (!v3Ok(ctx)) return void (ctx.body = v3ErrorFixture);
        let filters: unknown;
        try {
          filters = JSON.parse(String(body(ctx).custom_fields ?? '[]'));
        } catch {
          return void (ctx.body = v3Error(400, 'custom_fields is not valid JSON'));
        }
        const wanted = Array.isArray(filters)
          ? filters
              .filter((f) => f?.field_name === 'otp_phone' && f?.condition?.type === 'EQUAL')
              .map((f) => String(f.condition.value))
          : [];
        const found = [...users.values()].filter(
          (u) => wanted.length === 0 || (u.custom.otp_phone !== undefined && wanted.includes(u.custom.otp_phone)),
        );
        const page = found.slice(
          Number(body(ctx).offset ?? 0),
          Number(body(ctx).offset ?? 0) + Number(body(ctx).limit ?? 100),
        );
        ctx.body = {
          ...searchFixture,
          offset: Number(body(ctx).offset ?? 0),
          limit: Number(body(ctx).limit ?? 100),
          total: found.length,
          count: page.length,
          users: page.map(v3User),
        };
      });

      router.post(route(identityPaths.userUpdate), (ctx) => {
        if (!publisherOk(ctx, ctx.query.api_token)) return void (ctx.body = v3ErrorFixture);
        const user = byUid(ctx.query.uid);
        if (!user) return void (ctx.body = userNotFoundFixture);
        const fields = body(ctx);
        // JSON carries the custom fields, a form the identity fields (docs/contract.md#upstream-calls).
        if (ctx.is('application/json')) {
          if (fields.city !== undefined) user.custom.city = String(fields.city);
          if (fields.birth_date !== undefined) user.custom.birth_date = String(fields.birth_date);
          if (fields.otp_phone === null) delete user.custom.otp_phone;
          else if (fields.otp_phone !== undefined) user.custom.otp_phone = String(fields.otp_phone);
        } else {
          if (typeof fields.first_name === 'string') user.first_name = fields.first_name;
          if (typeof fields.last_name === 'string') user.last_name = fields.last_name;
          if (typeof fields.email === 'string') user.email = fields.email;
        }
        ctx.body = { ...updateFixture, user: v3User(user) };
      });

      router.post(route(identityPaths.token), (ctx) => {
        if (!publisherOk(ctx, ctx.query.api_token)) return void (ctx.body = errorList('Access denied', '403'));
        const user = byUid(ctx.query.uid);
        ctx.body = user ? { ...tokenFixture, access_token: jwt(user) } : errorList('User not found', '404');
      });

      router.get(route(identityPaths.accessList), (ctx) => {
        const user = ctx.query.aid === SANDBOX_AID ? tokenOwner(bearer(ctx) ?? '') : undefined;
        if (!user) {
          ctx.status = 401;
          return void (ctx.body = v3Error(401, 'Unauthorized'));
        }
        const owner = { uid: user.uid, email: user.email, first_name: user.first_name, last_name: user.last_name };
        ctx.body = { ...accessListFixture, data: accessListFixture.data.map((access) => ({ ...access, user: owner })) };
      });

      router.post(route(identityPaths.identityToken), (ctx) => {
        const { client_id, grant_type, refresh_token } = body(ctx);
        const uid = typeof refresh_token === 'string' ? refreshTokens.get(refresh_token) : undefined;
        const user = byUid(uid);
        if (client_id !== SANDBOX_AID || grant_type !== 'refresh_token' || !user) {
          ctx.status = 400;
          return void (ctx.body = invalidGrantFixture);
        }
        refreshTokens.delete(refresh_token as string);
        ctx.body = { ...refreshFixture, ...tokens(user) };
      });
    },
    configure: ({ baseUrl }) => ({
      identity: { base_url: `${baseUrl}${PREFIX}`, aid: SANDBOX_AID, api_token: SANDBOX_API_TOKEN },
    }),
  };
}
