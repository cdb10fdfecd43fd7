import { z } from 'zod';
import { mailbox } from '../../core/address';
import type { CallContext } from '../../core/context';
import type { MailingListClient } from '../../clients/mailing-list';
import { apiError, isApiError } from '../../core/errors';
import { maskSecret } from '../../core/logger';
import { defineAction } from '../action';
import { feedCode, headlineCode } from './headlines';
import { planSubscription, selectionFields, type HeadlinePlan } from './subscription-plan';
import { challengeField } from '../otp/fields';

const text = { type: 'string' } as const;

/*
 * The rule planSubscription enforces across fields, stated in the document too so that a
 * validator (and the typed client) refuses what the service refuses: `selections` with at least
 * one item, or `testata` with `mlids`; and neither of those two without the other.
 */
const newsletterSubscribeRequest = z
  .object({
    email: mailbox(),
    ...selectionFields,
    challenge: challengeField,
  })
  .meta({
    allOf: [
      {
        anyOf: [
          { required: ['selections'], properties: { selections: { type: 'array', minItems: 1 } } },
          { required: ['testata', 'mlids'], properties: { testata: text, mlids: text } },
        ],
      },
      {
        if: { required: ['testata'], properties: { testata: text } },
        then: { required: ['mlids'], properties: { mlids: text } },
      },
      {
        if: { required: ['mlids'], properties: { mlids: text } },
        then: { required: ['testata'], properties: { testata: text } },
      },
    ],
  });

const headlineResult = z.object({
  testata: headlineCode,
  feed: feedCode,
  ok: z.boolean(),
  outcome: z.enum(['subscribed', 'refused', 'upstream_error']),
  /** HTTP status of the mailing-list reply; 0 when none came (timeout, unreachable). */
  upstream_status: z.number().int(),
  message: z.string().optional(),
  sent: z.object({ email: z.string(), mlids: z.array(z.string()), api_key: z.string() }),
});
type HeadlineResult = z.infer<typeof headlineResult>;

const newsletterSubscribeResponse = z.object({
  email: z.string(),
  headlines: z.record(z.string(), headlineResult),
  subscribed: z.array(headlineCode),
  failed: z.array(headlineCode),
});

async function subscribe(
  ctx: CallContext,
  client: MailingListClient,
  email: string,
  plan: HeadlinePlan,
): Promise<HeadlineResult> {
  const { testata, feed } = plan;
  const sent = { email, mlids: plan.mlids, api_key: maskSecret(plan.apiKey) };
  try {
    const { accepted, status, message } = await client.subscribe(ctx, {
      email,
      mlids: plan.mlids,
      apiKey: plan.apiKey,
    });
    return {
      testata,
      feed,
      ok: accepted,
      outcome: accepted ? 'subscribed' : 'refused',
      upstream_status: status,
      ...(message ? { message } : {}),
      sent,
    };
  } catch (err) {
    if (!isApiError(err) || err.reason !== 'upstream_error') throw err;
    const status = typeof err.data.upstream_status === 'number' ? err.data.upstream_status : 0;
    return { testata, feed, ok: false, outcome: 'upstream_error', upstream_status: status, message: err.message, sent };
  }
}

export const newsletterSubscribe = defineAction({
  name: 'newsletter_subscribe',
  summary: 'Subscribes an email to mailing lists, one call per headline with its own key.',
  rules: ['each item of `selections` that names both a `feed` and a `testata` names a pair that belongs together'],
  request: newsletterSubscribeRequest,
  response: newsletterSubscribeResponse,
  reasons: ['partial_failure', 'subscription_failed', 'not_configured', 'rate_limited', 'challenge_required'],
  async handler(input, ctx) {
    const { deps } = ctx;
    const plans = planSubscription(input, deps.config.newsletter.api_keys);
    if (!deps.config.newsletter.esp_url) {
      throw apiError('not_configured', { params: { key: 'newsletter.esp_url' }, data: { key: 'newsletter.esp_url' } });
    }
    // No proof is asked (the contract), and each call mails the address's owner: counted per client and per email.
    // A bot challenge first when the client's traffic looks wrong (docs/security.md): a subscription mails whoever owns the address.
    await deps.challenge.check(ctx, { action: 'newsletter_subscribe', identifier: input.email });
    await deps.limits.subscription(ctx.ip, input.email);
    const results = await Promise.all(plans.map((plan) => subscribe(ctx, deps.mailingList, input.email, plan)));
    const data = {
      email: input.email,
      headlines: Object.fromEntries(results.map((r) => [r.testata, r])),
      subscribed: results.filter((r) => r.ok).map((r) => r.testata),
      failed: results.filter((r) => !r.ok).map((r) => r.testata),
    };
    if (data.failed.length === 0) return { data };
    if (data.subscribed.length === 0) throw apiError('subscription_failed', { data });
    throw apiError('partial_failure', { data });
  },
});
