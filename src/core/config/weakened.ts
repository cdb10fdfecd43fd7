import type { Config } from './schema';

/*
 * The switches that weaken a defence, read off one configuration: production refuses each
 * unless it is acknowledged by its own key (load.ts), every start logs one warn line per switch
 * on (src/service.ts), and /readyz lists them for an operator with the internal key. One list,
 * so the three never disagree.
 */

/** Keys that open something (proofs, tokens for any uid, figures, metrics): 32 characters, 128 bits and more in hex or base64. */
export const MIN_KEY_LENGTH = 32;

/**
 * Odds a guesser may have of hitting one code within its life: `otp.max_attempts` tries (a
 * resend keeps the count) out of 10^`otp.length` codes. Under 1 in 10,000 (docs/security.md,
 * "Keys that resist guessing", has the arithmetic over a day).
 */
export const MAX_GUESSING_ODDS = 1e-4;
export const guessingOdds = (otp: Pick<Config['otp'], 'length' | 'max_attempts'>): number =>
  otp.max_attempts / 10 ** otp.length;
/** The most wrong tries that keep a code of `length` digits under the odds: 99 for 6 digits, none for 4. */
export const mostAttempts = (length: number): number => 10 ** (length - 4) - 1;

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|\[::1\]|localhost)$/i;
export const isLoopbackHost = (host: string): boolean => LOOPBACK.test(host);

/** Receipts posted over plain http past this machine: on loopback (the sandbox) they never cross a network. */
export function receiptsOverPlainHttp(config: Pick<Config, 'sms'>): boolean {
  const base = config.sms.receipts.callback_base_url;
  if (!base.startsWith('http://')) return false;
  try {
    return !isLoopbackHost(new URL(base).hostname);
  } catch {
    return true;
  }
}

export interface WeakenedDefence {
  /** The key that weakens it, as an operator would set it. */
  key: string;
  /** What it leaves open, in a few words. */
  exposes: string;
}

export function weakenedDefences(config: Config): WeakenedDefence[] {
  const weakened: WeakenedDefence[] = [];
  const add = (on: boolean, key: string, exposes: string) => {
    if (on) weakened.push({ key, exposes });
  };
  add(config.debug, 'debug', 'upstream call traces in answers');
  add(config.otp.debug, 'otp.debug', 'plain codes in answers');
  add(
    !config.rate_limits.enabled,
    'rate_limits.enabled',
    'codes sent and guessed without any limit, the SMS pumping defence with them',
  );
  add(
    config.rate_limits.enabled && !config.sms.pumping.enabled,
    'sms.pumping.enabled',
    'codes to premium-rate number ranges unchecked',
  );
  add(
    config.rate_limits.enabled && config.challenge.mode === 'off',
    'challenge.mode',
    'codes and mails sent to bots that never prove any work, however wrong their traffic looks',
  );
  add(
    !config.security.guard_primitives,
    'security.guard_primitives',
    'tokens issued and profiles read or changed for any uid without a proof',
  );
  add(config.demo.enabled, 'demo.enabled', 'a demo page that drives real journeys against real accounts');
  add(
    Object.keys(config.otp.test_numbers).length > 0,
    'otp.test_numbers',
    'fixed codes: whoever learns one logs in as that account',
  );
  add(
    config.metrics.port !== 0 && !isLoopbackHost(config.metrics.host),
    'metrics.host',
    `metrics without a token to whoever reaches ${config.metrics.host}:${config.metrics.port}`,
  );
  add(
    receiptsOverPlainHttp(config),
    'sms.receipts.callback_base_url',
    'delivery receipts over plain http, readable and replayable on the way',
  );
  return weakened;
}
