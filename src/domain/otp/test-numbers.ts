import type { Config } from '../../core/config/schema';
import { ConfigError } from '../../core/config/load';
import type { Logger } from '../../core/logger';
import { maskOtpKey, type KeyNormaliser } from './key';

/*
 * Test identifiers (`otp.test_numbers`): phones and emails for app-store review and QA, each
 * with a fixed code. Nothing is ever delivered to them; every other rule (expiry, attempts,
 * cooldown, rate limits, proofs naming the address) is the OTP service's as for anyone.
 *
 * The map is normalised once, at start-up, by the normaliser request keys go through, so a
 * lookup per send is one Map.get on the same spelling the store uses.
 */

/** Normalised identifier -> fixed code; empty when none are configured (the usual case). */
export type TestIdentifiers = ReadonlyMap<string, string>;

/** The configured test identifiers, normalised; a ConfigError (the start-up's bad-configuration exit) when one is not a phone or an email. */
export function loadTestIdentifiers(config: Config, normaliseKey: KeyNormaliser, log: Logger): TestIdentifiers {
  const identifiers = new Map<string, string>();
  const problems: string[] = [];
  for (const [raw, code] of Object.entries(config.otp.test_numbers)) {
    const key = normaliseKey(raw);
    if (!key || key.kind === 'other') {
      problems.push(`otp.test_numbers.${maskOtpKey(raw)}: not a valid phone number or email`);
      continue;
    }
    const known = identifiers.get(key.value);
    if (known !== undefined && known !== code) {
      problems.push(`otp.test_numbers.${maskOtpKey(key.value)}: given twice with different codes`);
      continue;
    }
    identifiers.set(key.value, code);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  if (identifiers.size > 0) {
    // Loud on purpose: each one is an account whoever learns its code can enter. The codes themselves are never logged.
    log.warn(
      { count: identifiers.size, identifiers: [...identifiers.keys()].map(maskOtpKey) },
      'otp.test_numbers: fixed codes are active for these identifiers; nothing is sent to them',
    );
  }
  return identifiers;
}

/**
 * The fixed code of a send, when it has one: its key is a test identifier and so is every
 * address it goes to. A send that also reaches a real address gets a random code, so a fixed
 * code never lands in a real inbox; and a test code is stored under its own key only (the
 * stored hash binds the key), so it verifies for no other identifier.
 */
export function fixedCodeOf(
  testIdentifiers: TestIdentifiers,
  key: string,
  recipients: readonly string[],
): string | undefined {
  const code = testIdentifiers.get(key);
  if (code === undefined) return undefined;
  return recipients.every((address) => testIdentifiers.has(address)) ? code : undefined;
}
