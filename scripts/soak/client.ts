import { z } from 'zod';
import type { Tally } from './tally';

/*
 * One request to one instance, classified: an answer in the envelope (any status), a
 * connection cut (the instance was killed: refused, reset, closed mid-answer), or a timeout.
 * Anything else the service says (not JSON, not the envelope, a 5xx other than a 503
 * `store_unavailable` during the Redis outage) is counted as unexpected. The soak plays the
 * instances' load balancer (`server.trust_proxy_hops: 1`): `from` is the client's address it
 * forwards, which the bot challenge counts its signals by.
 */

const envelopeSchema = z
  .object({ success: z.boolean(), error: z.string().nullable(), data: z.record(z.string(), z.unknown()).nullable() })
  .refine(
    (e) => (e.success ? e.error === null : typeof e.error === 'string' && typeof e.data?.reason === 'string'),
    'success and error disagree',
  );

export type Envelope = z.infer<typeof envelopeSchema>;

export type Outcome =
  | { kind: 'answer'; status: number; envelope: Envelope }
  | { kind: 'store_unavailable' }
  | { kind: 'cut'; error: string }
  | { kind: 'timeout' }
  | { kind: 'unexpected'; description: string };

/** Longer than any answer may take: the slowest path is bounded by identity.timeout_seconds x 1.5. */
const REQUEST_TIMEOUT_MS = 20_000;

export const reasonOf = (envelope: Envelope) =>
  typeof envelope.data?.reason === 'string' ? envelope.data.reason : undefined;

export async function post(
  tally: Tally,
  baseUrl: string,
  action: string,
  body: Record<string, unknown>,
  from?: string,
): Promise<Outcome> {
  const sentAt = Date.now();
  tally.requests.sent += 1;
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${baseUrl}/?action=${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(from ? { 'x-forwarded-for': from } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    text = await response.text();
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') {
      tally.requests.timeouts += 1;
      return { kind: 'timeout' };
    }
    tally.requests.connectionErrors += 1;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { kind: 'cut', error: cause?.code ?? cause?.message ?? (err as Error).message };
  }
  const answeredAt = Date.now();
  let parsed: ReturnType<typeof envelopeSchema.safeParse> | undefined;
  try {
    parsed = envelopeSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  tally.answered(sentAt, answeredAt, parsed?.success === true && parsed.data.success);
  if (!parsed?.success) {
    const description = `${action} answered ${response.status} without the envelope: ${text.slice(0, 120)}`;
    tally.unexpected(description);
    return { kind: 'unexpected', description };
  }
  const envelope = parsed.data;
  if (response.status === 503 && reasonOf(envelope) === 'store_unavailable' && tally.inOutage(sentAt, answeredAt)) {
    tally.requests.outage503 += 1;
    return { kind: 'store_unavailable' };
  }
  if (response.status >= 500) {
    const description = `${action} answered ${response.status} ${reasonOf(envelope) ?? ''} at ${((answeredAt - tally.startedAt) / 1000).toFixed(1)} s`;
    tally.unexpected(description);
    return { kind: 'unexpected', description };
  }
  return { kind: 'answer', status: response.status, envelope };
}
