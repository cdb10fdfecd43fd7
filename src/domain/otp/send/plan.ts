import type { CallContext } from '../../../core/context';
import { budgetOf } from '../../../core/address';
import { isApiError } from '../../../core/errors';
import { maskEmail, maskPhone } from '../../../core/logger';
import { randomId } from '../../../core/random-id';
import { maskOtpKey } from '../key';
import { alreadySent } from '../errors';
import { guarded, logGenerate, type Send, type SendEnv } from './types';

/*
 * The second step of a send: who receives the code (the email fallback of a phone whose last SMS
 * did not arrive, a phone and an email only when they are one account's) and each recipient's
 * own cooldown, claimed for this send.
 */

/** Fills in the send's recipients and claims their cooldowns; throws `already_sent` when one is still cooling. */
export async function planRecipients(env: SendEnv, ctx: CallContext, send: Send): Promise<void> {
  const { smsTo, useSms } = send;
  // The last SMS to this phone did not arrive: this code goes to the account's confirmed email too, as rule 2 pairs them (docs/sms.md).
  const fallback =
    useSms && !send.useEmail && env.mailer.configured && env.smsPolicy
      ? await env.smsPolicy.fallbackEmail(ctx, smsTo!)
      : undefined;
  if (fallback) {
    send.fallback = fallback;
    send.emailTo = fallback.email;
    send.useEmail = true;
  }
  // A code to a phone and an email proves control of either: both only when they are one account's.
  // Asked after the per-IP cap, so a flood cannot make the service ask the provider without limit.
  if (useSms && send.useEmail && !fallback && !(await sharesAccount(env, ctx, smsTo!, send.emailTo!))) {
    env.log.warn(
      { key: maskOtpKey(send.key), phone: maskPhone(smsTo!), email: maskEmail(send.emailTo!) },
      'otp: phone and email are not one account, code sent by SMS only',
    );
    send.useEmail = false;
  }
  send.recipients = [...(useSms ? [smsTo!] : []), ...(send.useEmail ? [send.emailTo!] : [])];
  // The code goes to, and is recorded as, the addresses typed; it is counted on their inboxes.
  send.budgets = send.recipients.map(budgetOf);
  send.token = randomId(9);
  // Sends are charged to who receives them: six keys and one phone, or six spellings of one inbox, send one code per cooldown.
  try {
    await claimRecipients(env, send.budgets, send.token);
  } catch (err) {
    if (isApiError(err) && err.reason === 'already_sent') {
      logGenerate(env, send, { outcome: 'blocked', recipient: true });
      // An early resend is the journey of the code already sent: its refusal is counted there (on 14, not on the first screen).
      const journey = send.request.journey
        ? await guarded(() => env.store.journeyOf(send.key, env.now())).catch(() => undefined)
        : undefined;
      if (journey) send.request.journey!.kept(journey);
    }
    throw err;
  }
}

async function sharesAccount(env: SendEnv, ctx: CallContext, phone: string, email: string): Promise<boolean> {
  if (!env.sameAccount) return false;
  try {
    return await env.sameAccount(ctx, phone, email);
  } catch (err) {
    // The SMS still goes: an identity outage costs the second channel, never the code.
    env.log.warn(
      { err: isApiError(err) ? err.reason : 'error' },
      'otp: could not check that phone and email are one account',
    );
    return false;
  }
}

/**
 * Each receiving phone's and inbox's own cooldown, whatever the key: all or none are claimed.
 * `budgets` are the recipients as counted (budgetOf): every spelling of one inbox is one cooldown.
 */
export async function claimRecipients(env: SendEnv, budgets: readonly string[], token: string): Promise<void> {
  const claimed: string[] = [];
  for (const budget of budgets) {
    const claim = await guarded(() => env.store.claimRecipient(budget, token, env.policy.cooldownMs));
    if (!claim.claimed) {
      await releaseRecipients(env, claimed, token);
      throw alreadySent(Math.max(1, Math.ceil(claim.retryAfterMs / 1000)), env.otp.resend_cooldown_seconds);
    }
    claimed.push(budget);
  }
}

/** Gives the recipients' cooldowns back (a send that did not reach them charges them nothing). */
export const releaseRecipients = (env: SendEnv, budgets: readonly string[], token: string) =>
  guarded(() => Promise.all(budgets.map((budget) => env.store.releaseRecipient(budget, token))));
