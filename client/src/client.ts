import { ACTIONS, type components, type paths } from './openapi.js';

/*
 * One function per action of the service. Every action is `POST /<name>` with a JSON body and
 * answers the envelope `{ success, error, data }` (HTTP 200 for business outcomes; another status,
 * same envelope, for what is not the action's answer: 404, 413, 415, 429, 500...). The client
 * returns the envelope whatever the status, typed from the service's OpenAPI document, and throws
 * only when no envelope came back (network failure, a body that is not JSON).
 */

export type ActionName = (typeof ACTIONS)[number];

type Operation<A extends ActionName> = paths[`/${A}`]['post'];

/** The JSON body of an action. */
export type RequestOf<A extends ActionName> =
  Operation<A> extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** What an action answers: its success envelope or its business failure (HTTP 200). */
export type AnswerOf<A extends ActionName> =
  Operation<A> extends { responses: { 200: { content: { 'application/json': infer R } } } } ? R : never;

/** A refusal before the action ran (malformed JSON, unknown action, payload too large, rate limited...). */
export type TransportFailure = components['schemas']['Failure'];

/** The answer of one call: the action's envelope, or a transport-level failure in the same envelope. */
export type Envelope<A extends ActionName> = AnswerOf<A> | TransportFailure;

/** The data of an action's successful answer. */
export type DataOf<A extends ActionName> =
  Extract<AnswerOf<A>, { success: true }> extends { data: infer D } ? D : never;

/** What a `challenge_required` answer asks to solve (`data.challenge`): ALTCHA's proof of work, or a hosted widget's site key. */
export type Challenge = components['schemas']['Challenge'];

/**
 * The challenge a refusal asks for, when it is `challenge_required`: solve it (ALTCHA's widget,
 * or the provider's) and repeat the request with `challenge` set to the solution.
 */
export function challengeOf(envelope: { success: boolean; data?: unknown }): Challenge | undefined {
  if (envelope.success) return undefined;
  const data = envelope.data as { reason?: unknown; challenge?: Challenge } | null | undefined;
  return data?.reason === 'challenge_required' ? data.challenge : undefined;
}

/** The part of fetch the client uses: the browser's, Node's, or a test double. */
export type Fetch = (
  url: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body: string;
    credentials?: 'include' | 'same-origin' | 'omit';
    signal?: AbortSignal;
  },
) => Promise<{ status: number; json(): Promise<unknown> }>;

export interface ClientOptions {
  /** Where the service answers, e.g. `https://login.example.com`; empty for the page's own origin. */
  baseUrl?: string;
  /** Headers sent with every call (for example `x-internal-key` for a trusted backend caller). */
  headers?: Record<string, string>;
  /** Cookies: a browser sends `__utp` with `same-origin` (the default) or `include` for another origin. */
  credentials?: 'include' | 'same-origin' | 'omit';
  fetch?: Fetch;
}

export interface CallOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** No envelope came back: the service was not reached, or answered something that is not JSON. */
export class ClientError extends Error {
  override name = 'ClientError';
  constructor(
    message: string,
    /** The HTTP status when an answer arrived. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type ActionFunction<A extends ActionName> = (body: RequestOf<A>, options?: CallOptions) => Promise<Envelope<A>>;

export type Client = { readonly [A in ActionName]: ActionFunction<A> } & {
  /** Calls an action by name (the same as `client[name](body)`). */
  call<A extends ActionName>(action: A, body: RequestOf<A>, options?: CallOptions): Promise<Envelope<A>>;
};

export function createClient(options: ClientOptions = {}): Client {
  const base = (options.baseUrl ?? '').replace(/\/+$/, '');
  const send: Fetch = options.fetch ?? ((url, init) => fetch(url, init));
  async function call<A extends ActionName>(
    action: A,
    body: RequestOf<A>,
    callOptions: CallOptions = {},
  ): Promise<Envelope<A>> {
    let res;
    try {
      res = await send(`${base}/${encodeURIComponent(action)}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...options.headers,
          ...callOptions.headers,
        },
        body: JSON.stringify(body),
        credentials: options.credentials ?? 'same-origin',
        signal: callOptions.signal,
      });
    } catch (err) {
      throw new ClientError(`${action}: the service was not reached`, undefined, { cause: err });
    }
    try {
      return (await res.json()) as Envelope<A>;
    } catch (err) {
      throw new ClientError(`${action}: the answer (HTTP ${res.status}) is not JSON`, res.status, { cause: err });
    }
  }
  const client: Record<string, unknown> = { call };
  for (const action of ACTIONS)
    client[action] = (body: never, callOptions?: CallOptions) => call(action, body, callOptions);
  return client as Client;
}
