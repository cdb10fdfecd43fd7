import { budgetOf } from '../../../core/address';
import { isApiError } from '../../../core/errors';
import { smsFacts } from '../../phone';
import { generateCode } from '../code';
import { alreadySent } from '../errors';
import { addressesOf } from '../reached';
import { fixedCodeOf } from '../test-numbers';
import { releaseRecipients } from './plan';
import { guarded, logGenerate, type Send, type SendEnv } from './types';

/*
 * The third step of a send: the code, its record in the store (one per key and cooldown), and
 * the counters charged only for codes really issued. A refusal here takes the code back.
 */

/** Draws the code and records it; throws `already_sent` when the key's own cooldown runs (its recipients are given back). */
export async function issue(env: SendEnv, send: Send): Promise<void> {
  const { key, recipients, request } = send;
  send.sentAt = env.now();
  send.code =
    (env.testIdentifiers.size > 0 ? fixedCodeOf(env.testIdentifiers, key, recipients) : undefined) ??
    generateCode(env.otp.length);
  send.codeHash = env.hash(key, send.code);
  const issued = await guarded(() =>
    env.store.issue(key, send.codeHash, send.sentAt, env.policy, addressesOf(recipients), request.journey?.id),
  );
  if (issued.status === 'blocked') {
    // An early resend is the journey of the code already sent: its refusal is counted there (on 14, not on the first screen).
    if (request.journey && issued.journey) request.journey.kept(issued.journey);
    await releaseRecipients(env, send.budgets, send.token);
    const retryAfter = Math.max(1, Math.ceil(issued.retryAfterMs / 1000));
    logGenerate(env, send, { outcome: 'blocked', retry_after: retryAfter });
    throw alreadySent(retryAfter, env.otp.resend_cooldown_seconds);
  }
  send.issued = issued;
}

/**
 * Charges the issued code to its key and recipients (the per-identifier caps), reads the phone's
 * channel plan, and asks the pumping defence, before any provider is paid. Any refusal puts the
 * previous record back and gives the recipients their cooldowns.
 */
export async function charge(env: SendEnv, send: Send): Promise<void> {
  const { key, useSms, smsTo, request, issued } = send;
  const { smsPolicy } = env;
  // Counted only for codes really issued: requests refused by a cooldown cost the key and its recipients nothing.
  try {
    for (const subject of new Set([budgetOf(key), ...send.budgets]))
      await guarded(() => env.limits.sendToIdentifier(subject));
    // Which of the phone's channels (sms, whatsapp) to try, in order: read here, so a store that cannot answer takes the code back.
    if (useSms && smsPolicy)
      send.plan = await guarded(() => smsPolicy.channels(smsTo!, smsFacts(smsTo!).region ?? '', request.channel));
    // The pumping defence counts codes really issued too, whatever their channel, and refuses before any provider is paid.
    if (useSms && smsPolicy) await guarded(() => smsPolicy.admit(smsTo!, smsFacts(smsTo!).region ?? ''));
  } catch (err) {
    await guarded(() => env.store.revert(key, send.codeHash, issued!.previous));
    await releaseRecipients(env, send.budgets, send.token);
    logGenerate(env, send, { outcome: isApiError(err) ? err.reason : 'rate_limited' });
    throw err;
  }
  if (request.journey && issued!.record.journey) request.journey.kept(issued!.record.journey);
  logGenerate(env, send, { outcome: 'issued', ...(env.otp.debug ? { debug_code: send.code } : {}) });
}
