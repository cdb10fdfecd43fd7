import { z } from 'zod';
import type { Config } from '../core/config/schema';
import type { CallContext } from '../core/context';
import type { Logger } from '../core/logger';
import { createUpstream, type ClientOptions } from './http';

/*
 * The hosted bot challenges' server side: Cloudflare Turnstile and hCaptcha both take the token
 * the page's widget produced, as a form POST of `secret`, `response` and `remoteip` to their
 * siteverify endpoint, and answer JSON with `success` (Turnstile also echoes the `action` and
 * `cdata` the widget was rendered with, which bind the token to one action and identifier).
 * `challenge.verify_url` points it elsewhere (the sandbox's fakes, a test).
 */

const SITEVERIFY_URLS = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
} as const;

type HostedProvider = keyof typeof SITEVERIFY_URLS;

const siteverifyReply = z.looseObject({
  success: z.boolean(),
  'error-codes': z.array(z.string()).optional(),
  action: z.string().optional(),
  cdata: z.string().optional(),
  hostname: z.string().optional(),
});

interface SiteverifyResult {
  success: boolean;
  /** The provider's error codes (`timeout-or-duplicate`, `invalid-input-response`...), for the log. */
  errors: string[];
  /** Turnstile: the action and customer data the widget was rendered with. */
  action?: string;
  cdata?: string;
}

export interface CaptchaClient {
  readonly provider: HostedProvider;
  /** Asks the provider whether `token` is a solved challenge; throws `upstream_error` when it cannot be asked. */
  verify(ctx: CallContext, token: string): Promise<SiteverifyResult>;
}

export function createCaptchaClient(
  config: Config,
  log: Logger,
  { upstream, observe, declare }: ClientOptions = {},
): CaptchaClient | undefined {
  const settings = config.challenge;
  if (settings.provider === 'pow') return undefined;
  const provider = settings.provider;
  const url = settings.verify_url || SITEVERIFY_URLS[provider];
  const client =
    upstream ??
    createUpstream({
      name: provider,
      label: provider === 'turnstile' ? 'Turnstile' : 'hCaptcha',
      timeoutMs: settings.timeout_seconds * 1000,
      log,
      observe,
      declare,
      endpoints: ['siteverify'],
    });
  return {
    provider,
    async verify(ctx, token) {
      const { data } = await client.call(ctx, {
        endpoint: 'siteverify',
        method: 'POST',
        url,
        form: {
          secret: settings.secret_key,
          response: token,
          remoteip: ctx.ip,
          ...(provider === 'hcaptcha' && settings.site_key ? { sitekey: settings.site_key } : {}),
        },
        reply: siteverifyReply,
      });
      return {
        success: data.success,
        errors: data['error-codes'] ?? [],
        ...(data.action !== undefined ? { action: data.action } : {}),
        ...(data.cdata !== undefined ? { cdata: data.cdata } : {}),
      };
    },
  };
}
