import { maskEmail, maskSecret } from '../../src/core/logger';
import { MARIO, useSecurityApp } from './support';

/*
 * With `debug` on (a staging server), an answer shows only what the caller could see anyway:
 * no provider exchange on an answer refused, limited or reduced for them, and no character of
 * a secret or of a second address in a mask.
 */

describe('debug on: idp_debug only on what the caller was served', () => {
  const app = useSecurityApp({ debug: true, rate_limits: { lookups_per_ip_per_minute: 2 } });

  it('shows no provider reply (the victim profile) on a get_user_email reduced for lack of a proof', async () => {
    const res = await app().post('get_user_email', { email: MARIO.email });

    expect(res.body).toMatchObject({ success: true, data: null, meta: { limited: true } });
    expect(res.body).not.toHaveProperty('idp_debug');
    expect(res.body).not.toHaveProperty('idp_debugs');
    expect(JSON.stringify(res.body)).not.toContain(MARIO.uid);
  });

  it('shows no provider reply on a get_user_email refused by the lookup limit', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await app().post('get_user_email', { email: MARIO.email }));
    const limited = answers.find((a) => a.body.data?.reason === 'rate_limited');

    expect(limited).toBeDefined();
    expect(limited!.body).not.toHaveProperty('idp_debug');
    expect(JSON.stringify(limited!.body)).not.toContain(MARIO.uid);
  });

  it('shows no provider reply on a password login refused (unknown email and wrong password look alike)', async () => {
    const unknown = await app().post('login', { email: 'nobody@example.com', password: 'whatever-1' });
    const wrong = await app().post('login', { email: MARIO.email, password: 'whatever-1' });

    expect(unknown.body.success).toBe(false);
    expect(unknown.body).not.toHaveProperty('idp_debug');
    expect(wrong.body).toEqual(unknown.body);
  });
});

describe('masks', () => {
  it('show none of a secret characters, whatever its length', () => {
    for (const secret of ['k', 'abcd1234', 'a-long-api-key-0123456789']) expect(maskSecret(secret)).toBe('***');
    expect(maskSecret('')).toBe('');
  });

  it('cover every address of a list, a display name or a malformed address whole', () => {
    for (const spelling of [
      `attacker@evil.example ${MARIO.email}`,
      `a@b.example,${MARIO.email}`,
      `Name <${MARIO.email}>`,
      'no-at-sign',
      '@example.com',
      `x@@${MARIO.email}`,
    ]) {
      expect(maskEmail(spelling)).toBe('***');
    }
    expect(maskEmail(MARIO.email)).toBe(`m***@${MARIO.email.split('@')[1]}`);
  });
});
