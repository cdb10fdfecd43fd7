import { apiError, type ApiError } from '../../core/errors';
import type { VerifyOutcome } from './store';

/* The OTP outcomes as the caller reads them; their texts and statuses are the catalogue's (src/core/errors.ts). */

export const alreadySent = (retryAfter: number, cooldown: number) =>
  apiError('already_sent', { params: { retryAfter }, data: { blocked: true, retry_after: retryAfter, cooldown } });

export const deliveryFailed = () => apiError('delivery_failed');

export const channelNotConfigured = () => apiError('channel_not_configured');

export const regionNotAllowed = (field: string) =>
  apiError('region_not_allowed', { data: { issues: [{ path: field, message: 'phone region not allowed' }] } });

/** Codes go by SMS to mobiles only: a landline cannot read one, and premium, shared-cost, toll-free and VoIP numbers are toll-fraud targets. */
export const phoneNotMobile = (field: string) =>
  apiError('phone_not_mobile', { data: { issues: [{ path: field, message: 'not a mobile number' }] } });

export const storeUnavailable = (cause: unknown) =>
  apiError('store_unavailable', { cause, headers: { 'Retry-After': '1' } });

/** A request-field problem the schema cannot see (a phone that does not parse), shaped like the front controller's. */
export const invalidField = (path: string, message: string) =>
  apiError('invalid_request', { data: { issues: [{ path, message }] } });

/** A code refused: its outcome is the reason. */
export const verifyFailure = (outcome: Exclude<VerifyOutcome, 'ok'>): ApiError =>
  apiError(outcome, { data: { valid: false } });
