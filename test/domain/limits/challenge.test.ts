import pino from 'pino';
import type { CallContext } from '../../../src/core/context';
import { isApiError } from '../../../src/core/errors';
import { createMetrics } from '../../../src/core/metrics';
import { createChallengeGate } from '../../../src/domain/limits/challenge';
import { createMemoryRateLimiter } from '../../../src/domain/limits/rate-limiter';
import { testConfig } from '../../support/app';

/*
 * The password-failures signal of the bot challenge (docs/security.md, "Bot challenge"): wrong
 * passwords are counted on the email's inbox, so a guesser who changes the spelling (a tag,
 * Gmail's dots, googlemail) and the address it comes from still meets the challenge; and the
 * client signals, counted on the client's network, so an IPv6 client rotating its address
 * within its /64 is one client.
 */

const at = (ip: string) => ({ ip }) as unknown as CallContext;

function gate() {
  const metrics = createMetrics();
  const config = testConfig({ rate_limits: { enabled: true }, challenge: { mode: 'adaptive' } });
  const challenge = createChallengeGate(config, { limiter: createMemoryRateLimiter(), now: () => Date.UTC(2030, 0, 7), secret: 's'.repeat(32), log: pino({ level: 'silent' }), spend: async () => true, metrics });
  return { challenge, metrics };
}

const reasonOf = (attempt: Promise<void>) =>
  attempt.then(
    () => 'heard',
    (err: unknown) => (isApiError(err) ? err.reason : 'thrown'),
  );

describe('the bot challenge before a password login', () => {
  it('counts wrong passwords on the inbox, whatever its spelling and whichever client typed them', async () => {
    const { challenge, metrics } = gate();
    const spellings = ['bo.b+a@gmail.com', 'b.o.b@googlemail.com', 'bob+news@gmail.com'];
    for (const [i, email] of spellings.entries()) {
      expect(await reasonOf(challenge.check(at(`198.51.100.${i + 1}`), { action: 'login', identifier: email, password: true }))).toBe('heard');
      await challenge.passwordFailed(`198.51.100.${i + 1}`, email);
    }

    expect(await reasonOf(challenge.check(at('203.0.113.9'), { action: 'login', identifier: 'bob@gmail.com', password: true }))).toBe('challenge_required');
    expect(await metrics.render()).toMatch(/lfa_challenge_decisions_total\{decision="challenged",signal="password_failures"\} 1\n/);
    // Another inbox, from a client that typed nothing wrong, is heard.
    expect(await reasonOf(challenge.check(at('203.0.113.10'), { action: 'login', identifier: 'alice@gmail.com', password: true }))).toBe('heard');
  });
});

describe('the client signals of the bot challenge', () => {
  it('count an IPv6 client on its /64, whichever of its addresses it sends from', async () => {
    const { challenge } = gate();
    const wrongCodes = testConfig({}).challenge.client_verify_failures;
    for (let i = 0; i < wrongCodes; i++) await challenge.verifyFailed(`2001:db8:7:9:${(i + 1).toString(16)}::1`);

    const ask = { action: 'otp_generate', identifier: '+393331234567', phone: '+393331234567' };
    expect(await reasonOf(challenge.check(at('2001:db8:7:9:ffff:1:2:3'), ask))).toBe('challenge_required');
    // The next /64 is another client.
    expect(await reasonOf(challenge.check(at('2001:db8:7:a::1'), ask))).toBe('heard');
  });
});
