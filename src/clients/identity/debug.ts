import type { CallContext } from '../../core/context';
import { maskSecret } from '../../core/logger';

/*
 * `idp_debug` (docs/contract.md#addressing-and-envelope, only when `debug` is on): what was sent to the identity provider and
 * what came back, for the request being served. The request context holds the collection
 * (`idpExchanges`, present only when `debug` is on); the client records into it, and masks
 * tokens, keys and passwords before anything is kept.
 */

export interface IdpExchange {
  endpoint: string;
  method: string;
  /** Without the query string, which is shown masked in `query`. */
  url: string;
  query?: unknown;
  body?: unknown;
  headers?: Record<string, string>;
  status: number;
  duration_ms?: number;
  response?: unknown;
  error?: { reason: string; message: string };
}

const SECRET_KEY = /token|password|secret|api_?key|authorization/i;

/** A copy with every value under a secret-looking key masked (tokens, keys, passwords). */
function maskSecrets(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] =
      SECRET_KEY.test(key) && v !== null && v !== undefined && v !== ''
        ? maskSecret(String(v))
        : maskSecrets(v, depth + 1);
  }
  return out;
}

export function recordIdpExchange(ctx: CallContext, exchange: IdpExchange): void {
  ctx.idpExchanges?.push(maskSecrets(exchange) as Record<string, unknown>);
}
