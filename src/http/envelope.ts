import type { ApiError } from '../core/errors';

/** The response envelope (docs/contract.md#addressing-and-envelope). `error` is null on success so the shape never changes. */
export interface Envelope {
  success: boolean;
  error: string | null;
  data: Record<string, unknown> | null;
  [extra: string]: unknown;
}

export function successEnvelope(data: Record<string, unknown> | null, extra: Record<string, unknown> = {}): Envelope {
  return { success: true, error: null, data, ...extra };
}

export function failureEnvelope(err: ApiError): Envelope {
  return { success: false, error: err.message, data: { reason: err.reason, ...err.data }, ...err.extra };
}
