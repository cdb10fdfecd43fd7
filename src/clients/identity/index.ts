import { z } from 'zod';
import type { Config } from '../../core/config/schema';
import { apiError, ApiError } from '../../core/errors';
import type { CallContext } from '../../core/context';
import type { Logger } from '../../core/logger';
import { createUpstream, type ClientOptions, type UpstreamRequest, type UpstreamResponse } from '../http';
import { recordIdpExchange } from './debug';
import {
  accessListReply,
  identityProfile,
  loginReply,
  oauthError,
  tokenReply,
  v1Error,
  v3Failure,
  v3SearchReply,
  v3UserReply,
  type AccessListReply,
  type IdentityProfile,
  type LoginReply,
  type ProviderError,
  type TokenReply,
  type V3SearchReply,
  type V3User,
  type V3UserReply,
} from './replies';
import { identityUrls, requireUrl, type IdentityEndpoint } from './urls';

export * from './replies';

/*
 * The external identity provider, call by call as docs/contract.md#upstream-calls says. Transport
 * failures, non-2xx and unparseable replies become `upstream_error` in createUpstream; this
 * module adds the provider's own failure styles (`error_code_list` under HTTP 200 on
 * /id/api/v1, `code != 0` on /api/v3) and the few answers that are outcomes, not failures:
 * an unknown user (v3 code 2004, users/get 404), a refused user token and refused credentials
 * on the password login.
 */

/** v3 code for "user not found" (seen in client code; docs/identity.md#reply-shapes-assumed-and-where-they-come-from). */
const USER_NOT_FOUND_CODE = 2004;

/** The contract's phone search page. */
const SEARCH_PAGE = { offset: 0, limit: 100 } as const;

/** The `custom_fields` filter of the phone search (the contract fixes the names; the nesting is ours, see docs/identity.md). */
const phoneSearchFilter = (digits: string) => [
  { field_name: 'otp_phone', data_type: 'NUMBER', condition: { type: 'EQUAL', value: digits } },
];

export interface IdentityFields {
  first_name?: string;
  last_name?: string;
  email?: string;
}

export interface CustomFields {
  city?: string;
  birth_date?: string;
  /** Stored digits (E.164 without `+`); sent as a JSON number. null clears the field (sent as JSON null). */
  otp_phone?: string | null;
}

export interface IdentityClient {
  /** Passwordless when `password` is absent or empty; with one, `invalid_credentials` when the provider refuses it. */
  login(ctx: CallContext, request: { email: string; password?: string; stayLoggedIn: boolean }): Promise<LoginReply>;
  register(
    ctx: CallContext,
    request: { email: string; consents?: Record<string, unknown> | null; isMagicLinkSent: boolean },
  ): Promise<LoginReply>;
  /** Sets the DOI email state to confirmed; the reply has no known model and is passed through. */
  confirmDoi(ctx: CallContext, uid: string): Promise<unknown>;
  /** identity users/get; null when the provider does not know the email. */
  findUserByEmail(ctx: CallContext, email: string): Promise<IdentityProfile | null>;
  /** v3 user/get; null on code 2004. */
  getUser(ctx: CallContext, uid: string): Promise<V3User | null>;
  /** v3 user/search on custom field `otp_phone` equal to the stored digits. */
  searchByPhone(ctx: CallContext, digits: string): Promise<V3SearchReply>;
  /** Form-urlencoded first_name/last_name/email; `user_not_found` on code 2004. */
  updateIdentity(ctx: CallContext, uid: string, fields: IdentityFields): Promise<V3UserReply>;
  /** JSON city/birth_date/otp_phone (a number); `user_not_found` on code 2004. */
  updateCustom(ctx: CallContext, uid: string, fields: CustomFields): Promise<V3UserReply>;
  /** Publisher token for a uid, with the optional JSON body passed as given. */
  issueToken(ctx: CallContext, uid: string, body?: Record<string, unknown> | null): Promise<TokenReply>;
  /** OAuth refresh; `invalid_token` when the provider refuses the refresh token. */
  refreshToken(ctx: CallContext, refreshToken: string): Promise<TokenReply>;
  /** The user's accesses, with the user's token as Bearer; `invalid_token` on 401. */
  accessList(ctx: CallContext, userToken: string): Promise<AccessListReply>;
}

const bool = (value: boolean) => (value ? 'true' : 'false');
const NOT_FOUND_MESSAGE = /not[\s_-]*found|not[\s_-]*exist|doesn'?t exist|no such user|non trovat|inesistente/i;

const invalidToken = () => apiError('invalid_token', { data: { upstream: 'identity' } });

/** How the error texts name the provider: "Servizio di identità non disponibile." */
const SERVICE = 'di identità';

/** The provider failed a call (`data.endpoint`), however: `upstream_error` with what is known of it in `data`. */
export const identityFailure = (endpoint: string, data: Record<string, unknown> = {}) =>
  apiError('upstream_error', { params: { service: SERVICE }, data: { upstream: 'identity', endpoint, ...data } });

/*
 * A password login the provider refuses is "credentials refused" when it answers HTTP 4xx other
 * than 429, or HTTP 200 with an `error_code_list`: the provider may refuse a wrong password and
 * an unknown email in either style (docs/identity.md), with words and codes that tell the two
 * apart, so every such reply becomes the one `invalid_credentials` below and nothing of the
 * provider's reaches the caller (who could otherwise probe which emails have an account). 429
 * is the provider throttling us, and 5xx, timeouts and unparseable 2xx are outages: those stay
 * `upstream_error`, so an outage is never shown to users as their mistake. The price: a
 * publisher key the provider refuses also reads as `invalid_credentials` here; the warning
 * logged below carries the provider's status and codes.
 */
const CREDENTIALS_REFUSED_STATUSES = Array.from({ length: 100 }, (_, i) => 400 + i).filter((status) => status !== 429);

const invalidCredentials = () => apiError('invalid_credentials');

const userNotFound = (uid?: string) => apiError('user_not_found', { data: uid ? { uid } : {} });

/** The `endpoint` of each call below, for the metrics (every series at 0 from start). */
const IDENTITY_ENDPOINTS = [
  'login',
  'register',
  'doi_status',
  'users_get',
  'user_get',
  'user_search',
  'user_update_identity',
  'user_update_custom',
  'token',
  'refresh',
  'access_list',
] as const;
type IdentityCallName = (typeof IDENTITY_ENDPOINTS)[number];

export function createIdentityClient(
  config: Config,
  log: Logger,
  { observe, declare }: ClientOptions = {},
): IdentityClient {
  const { aid, api_token: apiToken } = config.identity;
  const urls = identityUrls(config.identity);
  const upstream = createUpstream({
    name: 'identity',
    label: SERVICE,
    timeoutMs: config.identity.timeout_seconds * 1000,
    log,
    observe,
    declare,
    endpoints: IDENTITY_ENDPOINTS,
  });
  const publisherAuth = { Authorization: `Bearer ${apiToken}` };

  async function send<T>(
    ctx: CallContext,
    endpoint: IdentityCallName,
    target: IdentityEndpoint,
    request: Omit<UpstreamRequest<T>, 'endpoint' | 'url'>,
  ): Promise<UpstreamResponse<T>> {
    const url = requireUrl(urls, target);
    const record = ctx.idpExchanges !== undefined;
    const exchange = {
      endpoint,
      method: request.method,
      url,
      query: request.params,
      body: request.json ?? request.form,
      headers: request.headers,
    };
    try {
      const response = await upstream.call<T>(ctx, { ...request, endpoint, url });
      if (record)
        recordIdpExchange(ctx, {
          ...exchange,
          status: response.status,
          duration_ms: response.durationMs,
          response: response.data,
        });
      return response;
    } catch (err) {
      if (record && err instanceof ApiError) {
        recordIdpExchange(ctx, {
          ...exchange,
          status: Number(err.data.upstream_status ?? 0),
          error: { reason: err.reason, message: err.message },
        });
      }
      throw err;
    }
  }

  /** The provider answered, but with its own failure: shown to the caller with the provider's words in `data`. */
  function rejected(ctx: CallContext, endpoint: string, errors: ReadonlyArray<Partial<ProviderError>>): ApiError {
    const providerErrors = errors.slice(0, 5).map((e) => ({ code: e.code ?? null, message: e.message ?? null }));
    log.warn(
      { client: 'identity', endpoint, provider_codes: providerErrors.map((e) => e.code), request_id: ctx.requestId },
      'identity provider refused the request',
    );
    return identityFailure(endpoint, { provider_errors: providerErrors });
  }

  /** The provider's status and codes go to the log only: the answer is the same whatever they say. */
  function credentialsRefused(ctx: CallContext, status: number, body: unknown): ApiError {
    const errors = v1Error.safeParse(body);
    const providerCodes = errors.success ? errors.data.error_code_list.slice(0, 5).map((e) => e.code ?? null) : [];
    log.warn(
      { client: 'identity', endpoint: 'login', status, provider_codes: providerCodes, request_id: ctx.requestId },
      'identity provider refused the credentials',
    );
    return invalidCredentials();
  }

  /** For calls that accept a non-2xx status as an answer: the 2xx body is guarded here instead of in createUpstream. */
  function parse<T>(ctx: CallContext, endpoint: string, guard: z.ZodType<T>, body: unknown): T {
    const parsed = guard.safeParse(body);
    if (parsed.success) return parsed.data;
    const detail = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.')}: ${i.message}`)
      .join('; ');
    log.warn(
      { client: 'identity', endpoint, outcome: 'bad_reply', detail, request_id: ctx.requestId },
      'upstream call failed',
    );
    throw identityFailure(endpoint);
  }

  const v1 = <T extends z.ZodType>(success: T) => z.union([v1Error, success]);
  const v3 = <T extends z.ZodType>(success: T) => z.union([success, v3Failure]);
  // The reply guards, built once: a zod union made per call cost as much as the parse it ran.
  const guards = {
    login: v1(loginReply),
    unknown: v1(z.unknown()),
    profile: z.union([identityProfile, z.looseObject({ user: identityProfile.nullable() }).transform((r) => r.user)]),
    user: v3(v3UserReply),
    search: v3(v3SearchReply),
    token: v1(tokenReply),
    refused: z.union([oauthError, v1Error]),
    accessList: v3(accessListReply),
  };
  /** v3Failure's parse, skipped where it cannot match (`code` is not a non-zero number: every success), so a success builds no zod issues. */
  const v3FailureOf = (data: unknown) => {
    const code = typeof data === 'object' && data !== null ? (data as { code?: unknown }).code : undefined;
    return typeof code === 'number' && code !== 0 ? v3Failure.safeParse(data) : undefined;
  };

  function v1Result<T>(ctx: CallContext, endpoint: string, data: z.infer<typeof v1Error> | T): T {
    if (typeof data === 'object' && data !== null && 'error_code_list' in data) {
      const list = (data as { error_code_list: unknown }).error_code_list;
      if (Array.isArray(list) && list.length > 0) throw rejected(ctx, endpoint, list as ProviderError[]);
    }
    return data as T;
  }

  function v3Result<T>(ctx: CallContext, endpoint: string, data: z.infer<typeof v3Failure> | T, uid?: string): T {
    const failure = v3FailureOf(data);
    if (!failure?.success) return data as T;
    if (failure.data.code === USER_NOT_FOUND_CODE && uid !== undefined) throw userNotFound(uid);
    throw rejected(ctx, endpoint, [{ code: failure.data.code, message: failure.data.message ?? null }]);
  }

  const publisherQuery = (uid: string) => ({ aid, api_token: apiToken, uid });

  return {
    async login(ctx, { email, password, stayLoggedIn }) {
      // The contract: the query's password is the empty-quoted string `""` for passwordless login.
      const request = {
        method: 'POST' as const,
        params: { aid, email, password: password ? password : '""' },
        json: { aid, email, stay_logged_in: bool(stayLoggedIn), ...(password ? { password } : {}) },
        headers: publisherAuth,
      };
      if (!password)
        return v1Result<LoginReply>(
          ctx,
          'login',
          (await send(ctx, 'login', 'login', { ...request, reply: guards.login })).data,
        );
      const { status, data } = await send(ctx, 'login', 'login', {
        ...request,
        acceptStatus: CREDENTIALS_REFUSED_STATUSES,
      });
      if (status >= 400 || v1Error.safeParse(data).success) throw credentialsRefused(ctx, status, data);
      return parse(ctx, 'login', loginReply, data);
    },

    async register(ctx, { email, consents, isMagicLinkSent }) {
      const { data } = await send(ctx, 'register', 'register', {
        method: 'POST',
        params: {
          aid,
          email,
          consents: JSON.stringify(consents ?? {}),
          is_magic_link_sent: bool(isMagicLinkSent),
          is_passwordless: 'true',
        },
        json: { password: '', is_passwordless: true, is_magic_link_sent: isMagicLinkSent, email, aid },
        headers: publisherAuth,
        reply: guards.login,
      });
      return v1Result<LoginReply>(ctx, 'register', data);
    },

    async confirmDoi(ctx, uid) {
      const { data } = await send(ctx, 'doi_status', 'doiStatus', {
        method: 'POST',
        params: { aid, uid, email_confirmation_state: 'CONFIRMED' },
        json: { aid, uid, email_confirmation_state: 'confirmed' },
        headers: publisherAuth,
        reply: guards.unknown,
      });
      return v1Result<unknown>(ctx, 'doi_status', data);
    },

    async findUserByEmail(ctx, email) {
      const { status, data } = await send(ctx, 'users_get', 'usersGet', {
        method: 'POST',
        params: { aid, api_token: apiToken, email },
        acceptStatus: [404],
      });
      if (status === 404 || data === null) return null;
      const failure = v1Error.safeParse(data);
      if (failure.success) {
        const errors = failure.data.error_code_list;
        if (errors.some((e) => NOT_FOUND_MESSAGE.test(e.message ?? '') || String(e.code ?? '') === '404')) return null;
        throw rejected(ctx, 'users_get', errors);
      }
      // Flat per the provider's SDK models (docs/identity.md); a `{ user }` wrapper is tolerated (`{ user: null }` means not found).
      return parse(ctx, 'users_get', guards.profile, data);
    },

    async getUser(ctx, uid) {
      const { data } = await send(ctx, 'user_get', 'userGet', {
        method: 'POST',
        form: { aid, api_token: apiToken, uid },
        reply: guards.user,
      });
      const failure = v3FailureOf(data);
      if (failure?.success && failure.data.code === USER_NOT_FOUND_CODE) return null;
      return v3Result<V3UserReply>(ctx, 'user_get', data).user;
    },

    async searchByPhone(ctx, digits) {
      const { data } = await send(ctx, 'user_search', 'userSearch', {
        method: 'POST',
        form: {
          api_token: apiToken,
          aid,
          source: 'CF',
          offset: SEARCH_PAGE.offset,
          limit: SEARCH_PAGE.limit,
          custom_fields: JSON.stringify(phoneSearchFilter(digits)),
        },
        reply: guards.search,
      });
      return v3Result<V3SearchReply>(ctx, 'user_search', data);
    },

    async updateIdentity(ctx, uid, fields) {
      const { data } = await send(ctx, 'user_update_identity', 'userUpdate', {
        method: 'POST',
        params: publisherQuery(uid),
        form: { first_name: fields.first_name, last_name: fields.last_name, email: fields.email },
        reply: guards.user,
      });
      return v3Result<V3UserReply>(ctx, 'user_update_identity', data, uid);
    },

    async updateCustom(ctx, uid, fields) {
      const { data } = await send(ctx, 'user_update_custom', 'userUpdate', {
        method: 'POST',
        params: publisherQuery(uid),
        json: {
          ...(fields.city !== undefined ? { city: fields.city } : {}),
          ...(fields.birth_date !== undefined ? { birth_date: fields.birth_date } : {}),
          ...(fields.otp_phone !== undefined
            ? { otp_phone: fields.otp_phone === null ? null : Number(fields.otp_phone) }
            : {}),
        },
        reply: guards.user,
      });
      return v3Result<V3UserReply>(ctx, 'user_update_custom', data, uid);
    },

    async issueToken(ctx, uid, body) {
      const { data } = await send(ctx, 'token', 'token', {
        method: 'POST',
        params: { api_token: apiToken, aid, uid },
        ...(body ? { json: body } : {}),
        reply: guards.token,
      });
      return v1Result<TokenReply>(ctx, 'token', data);
    },

    async refreshToken(ctx, refreshToken) {
      // The contract: client_id is the application id; no client secret, no redirect uri.
      const { status, data } = await send(ctx, 'refresh', 'identityToken', {
        method: 'POST',
        form: { client_id: aid, grant_type: 'refresh_token', refresh_token: refreshToken },
        acceptStatus: [400, 401],
      });
      if (status === 400 || status === 401) {
        // An OAuth refusal (`invalid_grant`) is the caller's expired token; any other 4xx body is a provider failure.
        parse(ctx, 'refresh', guards.refused, data);
        throw invalidToken();
      }
      const failure = v1Error.safeParse(data);
      if (failure.success) throw rejected(ctx, 'refresh', failure.data.error_code_list);
      const refused = oauthError.safeParse(data);
      if (refused.success && typeof (data as { access_token?: unknown }).access_token !== 'string')
        throw invalidToken();
      return parse(ctx, 'refresh', tokenReply, data);
    },

    async accessList(ctx, userToken) {
      const { status, data } = await send(ctx, 'access_list', 'accessList', {
        method: 'GET',
        params: { aid },
        headers: { Authorization: `Bearer ${userToken}` },
        acceptStatus: [401],
      });
      if (status === 401) throw invalidToken();
      return v3Result<AccessListReply>(ctx, 'access_list', parse(ctx, 'access_list', guards.accessList, data));
    },
  };
}
