import { ApiError } from '../../core/errors';
import type { VerifyOutcome } from './store';

/* The OTP outcomes as the caller reads them: SPEC.md's texts to the letter where it gives one. */

export const alreadySent = (retryAfter: number, cooldown: number) =>
  new ApiError('already_sent', `OTP già inviato. Riprova tra ${retryAfter} secondi.`, {
    data: { blocked: true, retry_after: retryAfter, cooldown },
  });

export const deliveryFailed = () => new ApiError('delivery_failed', 'Invio del codice non riuscito. Riprova.');

export const channelNotConfigured = () =>
  new ApiError('channel_not_configured', 'Nessun canale di invio configurato per questo destinatario.');

export const regionNotAllowed = (field: string) =>
  new ApiError('region_not_allowed', 'Invio SMS non consentito verso questo paese.', { data: { issues: [{ path: field, message: 'phone region not allowed' }] } });

/** Codes go by SMS to mobiles only: a landline cannot read one, and premium, shared-cost, toll-free and VoIP numbers are toll-fraud targets. */
export const phoneNotMobile = (field: string) =>
  new ApiError('phone_not_mobile', 'Il numero indicato non è un cellulare: inserisci un numero mobile.', {
    data: { issues: [{ path: field, message: 'not a mobile number' }] },
  });

export const storeUnavailable = (cause: unknown) =>
  // 503, not 200: a transport-level failure of ours, which load balancers and clients may retry.
  new ApiError('store_unavailable', 'Archivio dei codici non raggiungibile. Riprova più tardi.', { cause, status: 503, headers: { 'Retry-After': '1' } });

/** A request-field problem the schema cannot see (a phone that does not parse), shaped like the front controller's. */
export const invalidField = (path: string, message: string) =>
  new ApiError('invalid_request', 'Richiesta non valida.', { data: { issues: [{ path, message }] } });

const verifyFailures: Record<Exclude<VerifyOutcome, 'ok'>, () => ApiError> = {
  expired: () => new ApiError('expired', 'OTP scaduto. Richiedi un nuovo codice.', { data: { valid: false } }),
  invalid: () => new ApiError('invalid', 'OTP non valido.', { data: { valid: false } }),
  too_many_attempts: () => new ApiError('too_many_attempts', 'Troppi tentativi. Richiedi un nuovo codice.', { data: { valid: false } }),
};

export const verifyFailure = (outcome: Exclude<VerifyOutcome, 'ok'>): ApiError => verifyFailures[outcome]();
