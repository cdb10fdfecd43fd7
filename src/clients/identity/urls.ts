import type { Config } from '../../core/config/schema';
import { apiError } from '../../core/errors';

/*
 * The outbound identity calls (docs/contract.md#upstream-calls). Each URL is the full-URL override key when set, else
 * `identity.base_url` + the contract's path. Login, register and DOI have no override key (the
 * configuration has none), so they always hang off the base.
 */
export const identityPaths = {
  login: '/id/api/v1/publisher/identity/login',
  register: '/id/api/v1/publisher/identity/register',
  doiStatus: '/id/api/v1/publisher/identity/doi/status',
  usersGet: '/id/api/v1/publisher/users/get',
  userGet: '/api/v3/publisher/user/get',
  userSearch: '/api/v3/publisher/user/search',
  userUpdate: '/api/v3/publisher/user/update',
  token: '/id/api/v1/publisher/token',
  accessList: '/api/v3/user/access/list',
  identityToken: '/id/api/v1/identity/token',
} as const;

export type IdentityEndpoint = keyof typeof identityPaths;

const overrideKeys: Partial<Record<IdentityEndpoint, keyof Config['identity']>> = {
  usersGet: 'users_get_url',
  userGet: 'user_get_v3_url',
  userSearch: 'user_search_url',
  userUpdate: 'user_update_url',
  token: 'token_url',
  accessList: 'user_access_list_url',
  identityToken: 'identity_token_url',
};

export type IdentityUrls = Record<IdentityEndpoint, string>;

/** Every endpoint's URL, or '' when neither its override nor the base is configured. */
export function identityUrls(identity: Config['identity']): IdentityUrls {
  const base = identity.base_url.replace(/\/+$/, '');
  const urls = {} as IdentityUrls;
  for (const [endpoint, path] of Object.entries(identityPaths) as Array<[IdentityEndpoint, string]>) {
    const key = overrideKeys[endpoint];
    const override = key ? String(identity[key]) : '';
    urls[endpoint] = override || (base ? `${base}${path}` : '');
  }
  return urls;
}

export function requireUrl(urls: IdentityUrls, endpoint: IdentityEndpoint): string {
  const url = urls[endpoint];
  if (!url) {
    throw apiError('not_configured', {
      params: { key: 'identity.base_url' },
      data: { upstream: 'identity', endpoint },
    });
  }
  return url;
}
