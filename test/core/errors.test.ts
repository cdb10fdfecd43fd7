import type { FlowFailureReason } from '../../machines';
import {
  apiError,
  catalogue,
  isApiError,
  messageOf,
  reasons,
  statusOf,
  withDetails,
  type Reason,
} from '../../src/core/errors';
import { failureEnvelope } from '../../src/http/envelope';
import { createOpenApiDocument } from '../../src/http/openapi';

/*
 * The error catalogue (src/core/errors.ts): every reason once, with its status and its text.
 * The contract (docs/contract.md#errors) fixes some texts to the letter; the others are ours and are asserted through messageOf.
 */

/** Any parameter a text asks for, as a visible placeholder. */
const anyParams = new Proxy({}, { get: (_, name) => `<${String(name)}>` });
const textOf = (reason: Reason): string => {
  const message = catalogue[reason].message as string | ((params: unknown) => string);
  return typeof message === 'string' ? message : message(anyParams);
};

interface Schema {
  properties?: {
    success?: { const?: unknown; enum?: unknown[] };
    data?: { properties?: { reason?: { enum?: unknown[] } } };
  };
}

/** Every `data.reason` enum of a failure envelope (`success: false`) in the OpenAPI description. */
function listedReasons(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) listedReasons(item, found);
  } else if (typeof node === 'object' && node !== null) {
    const { success, data } = (node as Schema).properties ?? {};
    const failure = success?.const === false || (success?.enum?.length === 1 && success.enum[0] === false);
    if (failure) for (const reason of data?.properties?.reason?.enum ?? []) found.add(String(reason));
    for (const value of Object.values(node)) listedReasons(value, found);
  }
  return found;
}

describe('error catalogue', () => {
  it.each(reasons)('gives %s an HTTP status and a non-empty text without holes', (reason) => {
    const { status } = catalogue[reason];
    expect(Number.isInteger(status) && status >= 200 && status <= 599).toBe(true);
    expect(textOf(reason).trim()).not.toBe('');
    expect(textOf(reason)).not.toMatch(/undefined|null|\[object/);
  });

  it('keeps the texts the contract fixes to the letter', () => {
    expect(messageOf('already_sent', { retryAfter: 42 })).toBe('OTP già inviato. Riprova tra 42 secondi.');
    expect(messageOf('expired')).toBe('OTP scaduto. Richiedi un nuovo codice.');
    expect(messageOf('invalid')).toBe('OTP non valido.');
    expect(messageOf('phone_taken')).toBe('Telefono già registrato su un altro account');
  });

  it('keeps the texts the frontends already show', () => {
    expect(messageOf('invalid_credentials')).toBe('Email o password non corretti.');
    expect(messageOf('rate_limited', { retryAfter: 30 })).toBe('Troppe richieste. Riprova tra 30 secondi.');
    expect(messageOf('too_many_attempts')).toBe('Troppi tentativi. Richiedi un nuovo codice.');
    expect(messageOf('invalid_request')).toBe('Richiesta non valida.');
    expect(messageOf('upstream_error', { service: 'di identità' })).toBe(
      'Servizio di identità non disponibile. Riprova più tardi.',
    );
    expect(messageOf('not_configured', { key: 'newsletter.esp_url' })).toContain('newsletter.esp_url');
  });

  it('makes an error with the text, the status and the envelope of its reason', () => {
    const err = apiError('rate_limited', {
      params: { retryAfter: 7 },
      headers: { 'Retry-After': '7' },
      data: { retry_after: 7, limit: 'otp_ip' },
    });
    expect(isApiError(err)).toBe(true);
    expect(err).toMatchObject({
      reason: 'rate_limited',
      status: 429,
      message: 'Troppe richieste. Riprova tra 7 secondi.',
      headers: { 'Retry-After': '7' },
    });
    expect(failureEnvelope(err)).toEqual({
      success: false,
      error: 'Troppe richieste. Riprova tra 7 secondi.',
      data: { reason: 'rate_limited', retry_after: 7, limit: 'otp_ip' },
    });
    expect(apiError('store_unavailable').status).toBe(statusOf('store_unavailable'));
  });

  it('adds details to a failure without changing its reason, status, text or headers', () => {
    const cause = apiError('unauthorized', { headers: { 'WWW-Authenticate': 'Bearer' }, data: { upstream: 'x' } });
    const err = withDetails(cause, { data: { forwarded: false }, extra: { payload: { a: 1 } } });
    expect(err).toMatchObject({
      reason: 'unauthorized',
      status: 401,
      message: cause.message,
      headers: cause.headers,
      cause,
    });
    expect(failureEnvelope(err)).toEqual({
      success: false,
      error: cause.message,
      data: { reason: 'unauthorized', upstream: 'x', forwarded: false },
      payload: { a: 1 },
    });
  });

  it('knows every reason the OpenAPI description lists', () => {
    const listed = [...listedReasons(createOpenApiDocument())];
    expect(listed).toEqual(expect.arrayContaining(['already_sent', 'invalid_request', 'upstream_error']));
    expect(listed.filter((reason) => !(reason in catalogue))).toEqual([]);
  });

  it('knows every reason the login machine refuses with (checked by the compiler)', () => {
    // Fails `npm run typecheck` if the machine refuses with a reason the catalogue lacks.
    const subset: FlowFailureReason extends Reason ? true : false = true;
    expect(subset).toBe(true);
  });
});

describe('stacks', () => {
  // A refusal is an answer: capturing its stack cost 8% of a refused verify_otp under load.
  const frames = (err: Error) =>
    (err.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).length;

  it('captures no stack for a refusal, and leaves the stack limit as it was', () => {
    const limit = Error.stackTraceLimit;
    expect(frames(apiError('unknown_action'))).toBe(0);
    expect(frames(apiError('invalid_request'))).toBe(0);
    expect(
      frames(
        withDetails(
          apiError('rate_limited', {
            params: { retryAfter: 5 },
            headers: { 'Retry-After': '5' },
            data: { retry_after: 5, limit: 'sends_per_ip_per_hour' },
          }),
          { data: { more: 1 } },
        ),
      ),
    ).toBe(0);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('plain').stack).toMatch(/\n\s+at /);
  });

  it('keeps the stack of a fault (5xx, or an upstream or delivery failure answered 200)', () => {
    expect(frames(apiError('internal_error'))).toBeGreaterThan(0);
    expect(
      frames(apiError('upstream_error', { params: { service: 'SMS' }, data: { upstream: 'sms' } })),
    ).toBeGreaterThan(0);
    expect(frames(apiError('delivery_failed'))).toBeGreaterThan(0);
    expect(frames(apiError('store_unavailable'))).toBeGreaterThan(0);
  });
});
