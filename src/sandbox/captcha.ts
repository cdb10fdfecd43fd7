import { randomBytes } from 'node:crypto';
import type { SandboxFake } from './fake';

const PREFIX = '/captcha';
/** How long a token the fake handed out may be redeemed: Turnstile's and hCaptcha's tokens live about as long. */
const TOKEN_TTL_MS = 300_000;

/**
 * Turnstile's and hCaptcha's siteverify as the service calls them (src/clients/captcha.ts): a
 * form POST of `secret`, `response` and `remoteip`, answered with JSON `success` and
 * `error-codes`, and, as Turnstile does, the `action` and `cdata` the token was made for (hCaptcha's
 * client reads neither). One endpoint serves both: their protocols differ only there.
 * `GET /captcha/token?action=..&cdata=..` hands out a token as a solved widget would; each is
 * good once (again it is `timeout-or-duplicate`, as the providers answer) and for five minutes.
 */
export function createCaptchaFake(): SandboxFake {
  const tokens = new Map<string, { action: string; cdata: string; until: number; used: boolean }>();
  return {
    name: 'captcha',
    mount(router) {
      router.get(`${PREFIX}/token`, (ctx) => {
        const token = `sandbox.${randomBytes(18).toString('base64url')}`;
        const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, 255) : '');
        tokens.set(token, {
          action: text(ctx.query.action),
          cdata: text(ctx.query.cdata),
          until: Date.now() + TOKEN_TTL_MS,
          used: false,
        });
        ctx.body = { token };
      });
      router.post(`${PREFIX}/siteverify`, (ctx) => {
        const form = (ctx.request.body ?? {}) as Record<string, string | undefined>;
        const refuse = (code: string) => {
          ctx.body = { success: false, 'error-codes': [code] };
        };
        if (!ctx.is('application/x-www-form-urlencoded')) return refuse('bad-request');
        if (!form.secret) return refuse('missing-input-secret');
        if (!form.response) return refuse('missing-input-response');
        const held = tokens.get(form.response);
        if (!held) return refuse('invalid-input-response');
        if (held.used || held.until <= Date.now()) return refuse('timeout-or-duplicate');
        held.used = true;
        ctx.body = {
          success: true,
          'error-codes': [],
          challenge_ts: new Date().toISOString(),
          hostname: 'sandbox',
          action: held.action,
          cdata: held.cdata,
        };
      });
    },
    configure: ({ baseUrl }) => ({ challenge: { verify_url: `${baseUrl}${PREFIX}/siteverify` } }),
    reset: () => tokens.clear(),
  };
}
