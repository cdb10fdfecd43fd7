import type { CallContext } from '../../../core/context';
import { smsFacts, toE164 } from '../../phone';
import { channelNotConfigured, invalidField, phoneNotMobile, regionNotAllowed } from '../errors';
import { guarded, logGenerate, type OtpSendRequest, type Send, type SendEnv } from './types';

/*
 * The first step of a send: who the code is for, and whether this client may ask for one now.
 * Nothing is counted or claimed before it passes.
 */

/** The E.164 a phone is texted at: a valid mobile number of an allowed region (toll fraud, docs/abuse.md). */
export function smsReceiver(env: SendEnv, phone: string, field: string, normalised = false): string {
  const e164 = normalised ? phone : toE164(phone, env.region);
  if (!e164) throw invalidField(field, 'not a valid phone number');
  const { region: smsRegion, mobile } = smsFacts(e164);
  if (!env.allowedRegions.includes(smsRegion ?? '')) {
    env.smsPolicy?.refused('region_not_allowed', smsRegion ?? '');
    throw regionNotAllowed(field);
  }
  if (!mobile) {
    env.smsPolicy?.refused('phone_not_mobile', smsRegion ?? '');
    throw phoneNotMobile(field);
  }
  return e164;
}

/**
 * Where this request's code goes: otp_generate's rules 1 and 2 (docs/otp.md), SMS
 * only to mobile numbers of the allowed regions, and a phone and an email together only when
 * they are one account's (docs/security.md): a code to both proves control of either.
 */
export function targets(
  env: SendEnv,
  request: OtpSendRequest,
): { key: string; smsTo: string | undefined; emailTo: string | undefined } {
  const fields = { key: 'uid', phone: 'phone', email: 'notify_email', ...request.fields };
  const key = env.normaliseKey(request.key);
  if (!key || key.value === '') throw invalidField(fields.key, key ? 'must not be empty' : 'not a valid phone number');
  const smsTo =
    request.phone !== undefined
      ? smsReceiver(env, request.phone, fields.phone)
      : key.kind === 'phone'
        ? smsReceiver(env, key.value, fields.key, true)
        : undefined;
  const emailTo = request.email?.trim().toLowerCase() || (key.kind === 'email' && !smsTo ? key.value : undefined);
  if (!smsTo && !emailTo) throw invalidField(fields.phone, 'give a phone or an email to send the code to');
  if (request.channel !== undefined) {
    const field = request.fields?.channel ?? 'channel';
    if (!smsTo) throw invalidField(field, 'a channel is for a phone; this code goes by mail');
    if (env.smsPolicy) env.smsPolicy.checkChannel(smsFacts(smsTo).region ?? '', request.channel, field);
    else if (request.channel !== 'sms') throw invalidField(field, `not offered for this number: sms`);
  }
  return { key: key.value, smsTo, emailTo };
}

/**
 * The request's targets on channels that are configured, then the bot challenge and the per-IP
 * cap: a bot that cannot solve the challenge costs nothing but this check.
 */
export async function admit(env: SendEnv, ctx: CallContext, request: OtpSendRequest): Promise<Send> {
  const { key, smsTo, emailTo } = targets(env, request);
  const send: Send = {
    request,
    key,
    smsTo,
    emailTo,
    useSms: smsTo !== undefined && env.sms.configured,
    useEmail: emailTo !== undefined && env.mailer.configured,
    fallback: undefined,
    recipients: [],
    budgets: [],
    token: '',
    sentAt: 0,
    code: '',
    codeHash: '',
    issued: undefined,
    plan: { channels: ['sms'], preferred: 'sms' },
  };
  if (!send.useSms && !send.useEmail) {
    logGenerate(env, send, { outcome: 'channel_not_configured' });
    throw channelNotConfigured();
  }
  const { challenge } = env;
  const action = ctx.action;
  if (challenge && action !== undefined)
    await guarded(() => challenge.check(ctx, { action, identifier: key, ...(send.useSms ? { phone: smsTo } : {}) }));
  await guarded(() => env.limits.sendFromIp(ctx.ip));
  return send;
}
