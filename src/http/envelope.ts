import { messageIn, type ApiError } from '../core/errors';
import { dataIn } from '../core/issue-texts';

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

/** The one place an error becomes an answer: its text in the request's locale (Italian unless `en`). */
export function failureEnvelope(err: ApiError, locale?: string): Envelope {
  return {
    success: false,
    error: messageIn(err, locale),
    data: { reason: err.reason, ...dataIn(err, locale) },
    ...err.extra,
  };
}
