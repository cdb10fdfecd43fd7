/*
 * The one error type of the service. Anything that can fail with a stable, documented outcome
 * throws an ApiError; one middleware (src/http/envelope.ts) maps it to the envelope. Clients
 * translate axios errors into it; nothing outside src/clients sees axios.
 */

export type Reason =
  | 'invalid_request'
  | 'unknown_action'
  | 'malformed_json'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unauthorized'
  | 'rate_limited'
  | 'already_sent'
  | 'expired'
  | 'invalid'
  | 'too_many_attempts'
  | 'delivery_failed'
  | 'channel_not_configured'
  | 'region_not_allowed'
  | 'phone_not_mobile'
  | 'phone_taken'
  | 'phone_not_verified'
  | 'proof_required'
  | 'invalid_proof'
  | 'token_required'
  | 'invalid_token'
  | 'invalid_credentials'
  | 'user_not_found'
  | 'upstream_error'
  | 'not_configured'
  | 'subscription_failed'
  | 'partial_failure'
  | 'store_unavailable'
  | 'internal_error';

export interface ApiErrorOptions {
  /** HTTP status; 200 for business outcomes and validation failures (DESIGN.md). */
  status?: number;
  /** Extra fields of `data`, beside `reason`. */
  data?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Extra top-level envelope fields (for example `idp_debug`). */
  extra?: Record<string, unknown>;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly data: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(readonly reason: Reason, message: string, options: ApiErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.status = options.status ?? 200;
    this.data = options.data ?? {};
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

export const isApiError = (err: unknown): err is ApiError => err instanceof ApiError;
