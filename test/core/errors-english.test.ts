import { apiError, catalogue, englishTexts, messageIn, reasons, withDetails, type Reason } from '../../src/core/errors';
import { failureEnvelope } from '../../src/http/envelope';

/* The English texts of the error catalogue: one per reason, used only for requests in `en`; the Italian ones are untouched. */

const anyParams = new Proxy(
  {},
  { get: (_, name) => (name === 'retryAfter' ? 7 : name === 'service' ? 'di identità' : `<${String(name)}>`) },
);
const fill = (message: unknown): string =>
  typeof message === 'string' ? message : (message as (params: unknown) => string)(anyParams);
const english = (reason: Reason) => fill(englishTexts[reason]);
const italian = (reason: Reason) => fill(catalogue[reason].message);

describe('English error texts', () => {
  it.each(reasons)('gives %s an English text of its own, without holes', (reason) => {
    expect(english(reason).trim()).not.toBe('');
    expect(english(reason)).not.toMatch(/undefined|null|\[object|di |Riprova/);
    expect(english(reason)).not.toBe(italian(reason));
  });

  it('fills the parameters as the Italian text does', () => {
    expect(messageIn(apiError('already_sent', { params: { retryAfter: 42 } }), 'en')).toBe(
      'Code already sent. Try again in 42 seconds.',
    );
    expect(messageIn(apiError('rate_limited', { params: { retryAfter: 3 } }), 'en')).toBe(
      'Too many requests. Try again in 3 seconds.',
    );
    expect(messageIn(apiError('not_configured', { params: { key: 'sms.api_url' } }), 'en')).toBe(
      'Service not configured (sms.api_url).',
    );
  });

  it('names the unavailable service in English', () => {
    const text = (service: string) => messageIn(apiError('upstream_error', { params: { service } }), 'en');
    expect(text('di identità')).toBe('The identity service is unavailable. Try again later.');
    expect(text('di posta')).toBe('The mail service is unavailable. Try again later.');
    expect(text('SMS')).toBe('The SMS service is unavailable. Try again later.');
  });

  it('answers the Italian text for any other locale, and when none is given', () => {
    const err = apiError('already_sent', { params: { retryAfter: 42 } });
    for (const locale of [undefined, 'it', 'fr', 'EN'])
      expect(messageIn(err, locale)).toBe('OTP già inviato. Riprova tra 42 secondi.');
  });

  it('keeps the parameters through withDetails, so an enriched failure is translated too', () => {
    const err = withDetails(apiError('rate_limited', { params: { retryAfter: 9 }, data: { retry_after: 9 } }), {
      data: { limit: 'otp_ip' },
    });
    expect(failureEnvelope(err, 'en')).toEqual({
      success: false,
      error: 'Too many requests. Try again in 9 seconds.',
      data: { reason: 'rate_limited', retry_after: 9, limit: 'otp_ip' },
    });
    expect(failureEnvelope(err)).toEqual({
      success: false,
      error: 'Troppe richieste. Riprova tra 9 secondi.',
      data: { reason: 'rate_limited', retry_after: 9, limit: 'otp_ip' },
    });
  });
});
