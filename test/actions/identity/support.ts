import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import nock from 'nock';
import request from 'supertest';
import { deepMerge } from '../../../src/core/config/load';
import type { Config } from '../../../src/core/config/schema';
import type { DepsOverrides } from '../../../src/domain/deps';
import { signProof, type ProofClaims } from '../../../src/domain/proofs';
import { testApp, testConfig, testDeps } from '../../support/app';
export { useNock } from '../../support/nock';

/* Shared by the identity action tests: a configured provider at BASE (faked with nock), the real app, proofs. */

export const BASE = 'https://idp.test';
export const AID = 'AID123';
export const API_TOKEN = 'publisher-api-token-0001';
export const INTERNAL_KEY = 'internal-key-0123456789abcdef';

export function identityConfig(overrides: Record<string, unknown> = {}): Config {
  return testConfig(
    deepMerge(
      {
        identity: { base_url: BASE, aid: AID, api_token: API_TOKEN, timeout_seconds: 5 },
        security: { internal_key: INTERNAL_KEY },
      },
      overrides,
    ),
  );
}

export function identityApp(config: Config = identityConfig(), overrides: DepsOverrides = {}) {
  const deps = testDeps(config, overrides);
  const server = testApp(deps).callback();
  const call = (action: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    request(server).post(`/?action=${action}`).set(headers).send(body);
  const proof = (claims: Omit<ProofClaims, 'kind'>, ttlSeconds = 900) =>
    signProof(deps.secret, { kind: 'verified', ...claims }, ttlSeconds, deps.now());
  return { deps, server, call, proof };
}

/** The internal-key header: a trusted caller, no proof needed. */
export const internal = { 'x-internal-key': INTERNAL_KEY };

export function fixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(
    readFileSync(join(__dirname, '..', '..', '..', 'src', 'sandbox', 'fixtures', 'identity', `${name}.json`), 'utf8'),
  ) as T;
}

export interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** Intercepts one call and records what was sent. */
export function intercept(method: 'GET' | 'POST', path: string, status: number, reply: unknown) {
  const seen: Seen[] = [];
  const scope = nock(BASE)
    .intercept(path, method)
    .query(true)
    .reply(function (uri, body) {
      const url = new URL(uri, BASE);
      seen.push({
        method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body,
        headers: this.req.headers,
      });
      return [status, reply as nock.ReplyBody];
    });
  return { scope, seen };
}

/** A form-urlencoded body as an object (asserts the encoding by parsing it as such). */
export const formOf = (seen: Seen) => Object.fromEntries(new URLSearchParams(seen.body as string));

export const paths = {
  login: '/id/api/v1/publisher/identity/login',
  register: '/id/api/v1/publisher/identity/register',
  doi: '/id/api/v1/publisher/identity/doi/status',
  usersGet: '/id/api/v1/publisher/users/get',
  userGet: '/api/v3/publisher/user/get',
  search: '/api/v3/publisher/user/search',
  update: '/api/v3/publisher/user/update',
  token: '/id/api/v1/publisher/token',
  accessList: '/api/v3/user/access/list',
  refresh: '/id/api/v1/identity/token',
} as const;

/** Set-Cookie lines of a response. */
export const setCookies = (res: { headers: Record<string, unknown> }): string[] => {
  const value = res.headers['set-cookie'];
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
};
