import { z } from 'zod';

/*
 * One schema for the whole configuration. Every key the service will ever read is declared from day one,
 * so one file serves every version; unknown keys are refused (strict objects) so typos surface.
 * Defaults are the contract's (docs/contract.md#limits). Environment values arrive as strings or JSON scalars, so string
 * fields accept numbers (an `aid` of digits) and list fields accept comma-separated strings.
 */

const text = z.preprocess((v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v), z.string());
const seconds = z.number().int().min(1);
const port = z.number().int().min(0).max(65535);
const list = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v),
  z.array(z.string()),
);
// `host:port`, `[v6]:port`: a Redis Cluster seed node.
const hostPort = z.string().refine((v) => {
  const match = /^(?:\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):(\d{1,5})$/.exec(v);
  return match !== null && Number(match[1]) >= 1 && Number(match[1]) <= 65535;
}, 'must be host:port');
/**
 * An entry of `server.cors_origins`: an origin exactly as a browser sends it. `*` is refused,
 * not honoured (docs/decisions.md): the API answers with credentials allowed (the `__utp`
 * cookie), so every site could call it in its visitors' name. A path, a trailing slash or capitals
 * would never equal an Origin header: refused too, rather than matching nothing in silence.
 */
const corsOrigin = z.string().superRefine((v, check) => {
  if (v === '*') {
    check.addIssue({ code: 'custom', message: '"*" is refused: answers allow credentials (the __utp cookie), so every site could call the API in its visitors\' name; list the frontend origins, e.g. https://login.example.com' });
    return;
  }
  let origin = '';
  try {
    const parsed = new URL(v);
    if (parsed.protocol === 'https:' || parsed.protocol === 'http:') origin = parsed.origin;
  } catch {
    // Not a URL at all: refused below.
  }
  if (origin !== v) check.addIssue({ code: 'custom', message: `must be an origin as a browser sends it: scheme://host[:port], lower case, no path or trailing slash${origin ? ` (${origin})` : ''}` });
});
const url = text.refine((v) => v === '' || /^https?:\/\/[^\s]+$/.test(v), 'must be an http(s) URL or empty');
const section = <T extends z.ZodRawShape>(shape: T) => {
  const object = z.strictObject(shape);
  // prefault: an absent section is parsed as {}, so its keys' defaults apply.
  return object.prefault({} as z.input<typeof object>);
};
/** The bot challenge's client signals on one wider network (a /56, a /48, an IPv4 /24): each a count within `challenge.window_seconds` (refusals: `refusal_seconds`). */
const networkBudget = (defaults: { sends: number; identifiers: number; verify_failures: number; refused: number }) =>
  section({
    sends: z.number().int().min(1).default(defaults.sends),
    identifiers: z.number().int().min(1).default(defaults.identifiers),
    verify_failures: z.number().int().min(1).default(defaults.verify_failures),
    refused: z.number().int().min(1).default(defaults.refused),
  });
/** A locale as templates/<locale>/ names it: a language subtag, optionally a region (`it`, `en`, `pt-br`). */
export const localeTag = /^[a-z]{2,3}(-[a-z0-9]{2,8})?$/;
/**
 * A list or a map from the environment: one JSON string (`SMS__PROVIDERS='[{"kind":"twilio",...}]'`,
 * `OTP__TEST_NUMBERS='{"+393330000000":"123456"}'`); from a file it is a list or a map already and is
 * taken as is. Text that does not parse is refused here, under the key the loader names, and never
 * quoted: JSON.parse's message quotes the input, and these values carry credentials and codes.
 */
const fromJson = <T extends z.ZodType>(shape: 'list' | 'map', schema: T) =>
  z.preprocess((v, check) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      const example = shape === 'list' ? '[...]' : '{...}';
      check.addIssue({ code: 'custom', message: `is not valid JSON: in the environment this ${shape} is one JSON ${shape === 'list' ? 'list' : 'object'} (${example})` });
      return z.NEVER;
    }
  }, schema);
/**
 * `otp.test_numbers`: identifier -> fixed code. Keys are E.164 phones or emails (normalised again
 * at start-up, as request identifiers are); codes are digits, checked against `otp.length` below.
 */
const testNumbers = fromJson('map', z.record(z.string(), text));
/** A JSON list from the environment; a list from a file as is. */
const jsonList = <T extends z.ZodType>(item: T) => fromJson('list', z.array(item));
/** ISO 3166 alpha-2 region codes, upper-cased (`it` is `IT`). */
const regions = list.pipe(z.array(z.string().trim().toUpperCase().regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 region such as IT')));
/*
 * One SMS provider of `sms.providers`. `name` labels metrics, the ledger and its receipt URL
 * (/_sms/receipts/<name>), so it is a bounded slug; empty takes the kind's name.
 */
const smsProviderCommon = {
  name: z.string().regex(/^([a-z][a-z0-9_-]{0,31})?$/, 'must be a short lower-case name such as twilio-eu').default(''),
  countries: regions.default([]),
  weight: z.number().int().min(0).default(1),
  timeout_seconds: seconds.optional(),
};
/** A Twilio account, for SMS and for WhatsApp alike: its credentials, and a From number or a Messaging Service to send from. */
const twilioAccount = {
  account_sid: text.pipe(z.string().min(1, 'is required')),
  auth_token: text.pipe(z.string().min(1, 'is required')),
  from: text.default(''),
  messaging_service_sid: text.default(''),
  api_url: url.default('https://api.twilio.com'),
};
const twilioSender: [(p: { from: string; messaging_service_sid: string }) => boolean, { message: string; path: string[] }] = [
  (p) => p.from !== '' || p.messaging_service_sid !== '',
  { message: 'needs from or messaging_service_sid', path: ['from'] },
];
const smsProvider = z.discriminatedUnion('kind', [
  // The contract's HTTP gateway; empty url, key or sender fall back to sms.api_url, sms.api_key, sms.sender.
  z.strictObject({ kind: z.literal('gateway'), ...smsProviderCommon, api_url: url.default(''), api_key: text.default(''), sender: text.default('') }),
  // Twilio's Programmable Messaging (Messages resource): account SID and auth token, a From number or a Messaging Service.
  z.strictObject({ kind: z.literal('twilio'), ...smsProviderCommon, ...twilioAccount }).refine(...twilioSender),
  // WhatsApp through Meta's Cloud API: an approved authentication template (the code and its copy-code button).
  z.strictObject({
    kind: z.literal('whatsapp_cloud'),
    ...smsProviderCommon,
    phone_number_id: text.pipe(z.string().regex(/^\d{1,32}$/, 'must be the digits of the WhatsApp phone-number id')),
    access_token: text.pipe(z.string().min(1, 'is required')),
    template: text.pipe(z.string().regex(/^[a-z0-9_]{1,512}$/, 'must be the template name (lower case, digits, _)')),
    language: text.default(''),
    app_secret: text.default(''),
    verify_token: text.default(''),
    api_url: url.default('https://graph.facebook.com'),
    api_version: text.pipe(z.string().regex(/^v\d+\.\d+$/, 'must be a Graph API version such as v21.0')).default('v21.0'),
  }),
  // WhatsApp through Twilio: `whatsapp:` addresses and a Content Template (its SID) with the code as variable 1.
  z.strictObject({
    kind: z.literal('twilio_whatsapp'),
    ...smsProviderCommon,
    ...twilioAccount,
    content_sid: text.pipe(z.string().regex(/^HX[0-9a-fA-F]{32}$/, 'must be a Content Template SID (HX...)')),
  }).refine(...twilioSender),
]);
export type SmsProviderConfig = z.infer<typeof smsProvider>;
export const smsProviderName = (provider: SmsProviderConfig): string => provider.name || provider.kind;

/** How a code reaches a phone: a text message, or a WhatsApp authentication message. */
export const PHONE_CHANNELS = ['sms', 'whatsapp'] as const;
export type PhoneChannel = (typeof PHONE_CHANNELS)[number];
/**
 * `sms.channels`: per region (or `default`), the channels a phone's code is tried on, in order.
 * From the environment one JSON object (`SMS__CHANNELS='{"IT":["whatsapp","sms"]}'`).
 */
const phoneChannels = fromJson(
  'map',
  z.record(
    z.string().trim().toUpperCase().regex(/^([A-Z]{2}|DEFAULT)$/, 'must be an ISO 3166 alpha-2 region such as IT, or default'),
    z
      .array(z.enum(PHONE_CHANNELS))
      .min(1)
      .refine((channels) => new Set(channels).size === channels.length, 'names each channel once'),
  ),
);

/**
 * `server.trust_proxy`, the boolean before `server.trust_proxy_hops`, read for one release in its
 * safe meaning: true is one appending proxy (the last X-Forwarded-For entry, where it used to
 * take the first), false none. Set beside trust_proxy_hops it must say the same, or which one
 * the operator meant is a guess: the configuration is refused.
 */
function trustProxyAsHops(server: unknown, check: z.core.$RefinementCtx): unknown {
  if (typeof server !== 'object' || server === null) return server;
  const { trust_proxy: legacy, trust_proxy_hops: hops } = server as { trust_proxy?: unknown; trust_proxy_hops?: unknown };
  if (typeof legacy !== 'boolean') return server;
  const meant = legacy ? 1 : 0;
  if (hops === undefined) return { ...server, trust_proxy_hops: meant };
  if (hops !== meant) {
    check.addIssue({
      code: 'custom',
      path: ['trust_proxy'],
      message: `${String(legacy)} means server.trust_proxy_hops: ${meant}, but server.trust_proxy_hops is ${JSON.stringify(hops)}: remove the deprecated server.trust_proxy`,
    });
  }
  return server;
}

const isTestIdentifier = (key: string) => /^\+[1-9]\d{6,14}$/.test(key) || z.email().safeParse(key).success;

export const configSchema = z
  .strictObject({
    server: z
      .preprocess(
        trustProxyAsHops,
        z.strictObject({
          host: text.default('127.0.0.1'),
          port: port.default(8080),
          cors_origins: list.pipe(z.array(corsOrigin)).default([]),
          body_limit: z.number().int().min(1024).default(64 * 1024),
          // Deprecated for trust_proxy_hops (read as 1 or 0 by trustProxyAsHops); kept one release, warned at start.
          trust_proxy: z.boolean().optional(),
          trust_proxy_hops: z.number().int().min(0).default(0),
          forwarded_header: z.enum(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'),
          cookie_domain: text.default(''),
          /** Lifetime of the `__utp` cookie with stay_logged_in when the token does not say (`expires_in`): 30 days. */
          cookie_max_age_seconds: seconds.default(30 * 24 * 3600),
          shutdown_grace_seconds: seconds.default(10),
          headers_timeout_seconds: seconds.max(30).default(15),
          request_timeout_seconds: seconds.max(30).default(30),
          keep_alive_timeout_seconds: seconds.max(30).default(5),
          max_connections_per_client: z.number().int().min(0).default(64),
        }),
      )
      .prefault({}),
    debug: z.boolean().default(false),
    log: section({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    }),
    otp: z
      .strictObject({
        ttl_seconds: seconds.default(300),
        length: z.number().int().min(4).max(10).default(6),
        resend_cooldown_seconds: seconds.default(60),
        debug: z.boolean().default(false),
        max_attempts: z.number().int().min(1).default(5),
        store: z.enum(['memory', 'redis']).default('memory'),
        max_records: z.number().int().min(1).default(1_000_000),
        log_file: text.default('logs/otp.log'),
        test_numbers: testNumbers.default({}),
        test_numbers_in_production: z.boolean().default(false),
      })
      .superRefine((otp, check) => {
        // A fixed code must be one the service could have generated: otp.length digits.
        for (const [identifier, code] of Object.entries(otp.test_numbers)) {
          if (!isTestIdentifier(identifier)) {
            check.addIssue({ code: 'custom', path: ['test_numbers', identifier], message: 'the identifier must be an E.164 phone (+393331234567) or an email' });
          }
          if (!new RegExp(`^\\d{${otp.length}}$`).test(code)) {
            check.addIssue({ code: 'custom', path: ['test_numbers', identifier], message: `the code must be ${otp.length} digits (otp.length)` });
          }
        }
      })
      .prefault({}),
    redis: section({
      url: text.default('redis://127.0.0.1:6379'),
      // Braces would set a hash tag of their own and move keys out of the slots the scripts rely on.
      key_prefix: text.refine((v) => !/[{}]/.test(v), 'must not contain { or }').default('lfa:'),
      // Seed nodes of a Redis Cluster; non-empty means the Cluster client, and `url` is unused.
      cluster: list.pipe(z.array(hostPort)).default([]),
      // AUTH and TLS of managed Redis: a cluster's seeds carry no credentials, so they live here.
      username: text.default(''),
      password: text.default(''),
      tls: z.boolean().default(false),
    }),
    identity: section({
      base_url: url.default(''),
      aid: text.default(''),
      api_token: text.default(''),
      timeout_seconds: seconds.default(10),
      user_update_url: url.default(''),
      user_get_v3_url: url.default(''),
      users_get_url: url.default(''),
      token_url: url.default(''),
      user_search_url: url.default(''),
      user_access_list_url: url.default(''),
      identity_token_url: url.default(''),
    }),
    mail: section({
      host: text.default(''),
      port: port.default(587),
      secure: z.boolean().default(false),
      user: text.default(''),
      pass: text.default(''),
      from_address: text.default(''),
      from_name: text.default(''),
      app_name: text.default('Login'),
      /** The language of codes and error texts when the request names none we have (templates/<locale>/). */
      default_locale: text.pipe(z.string().toLowerCase().regex(localeTag, 'must be a locale such as it or en')).default('it'),
      timeout_seconds: seconds.default(10),
    }),
    sms: section({
      api_url: url.default(''),
      api_key: text.default(''),
      sender: text.default(''),
      default_region: text.default('IT'),
      allowed_regions: list.default([]),
      // The WebOTP line (`@<domain> #<code>`) binds a code to the site that may autofill it: a bare host name, no scheme, port or path.
      webotp_domain: text
        .pipe(z.string().trim().toLowerCase())
        .refine((v) => v === '' || z.hostname().safeParse(v).success, 'must be a host name such as login.example.com')
        .default(''),
      timeout_seconds: seconds.default(10),
      providers: jsonList(smsProvider)
        .refine((providers) => new Set(providers.map(smsProviderName)).size === providers.length, 'provider names must be unique (set name on providers of one kind)')
        .default([]),
      channels: phoneChannels.default({}),
      channel_choice: z.boolean().default(false),
      breaker: section({
        failures: z.number().int().min(1).default(5),
        open_seconds: seconds.default(30),
      }),
      receipts: section({
        callback_base_url: url.default(''),
        timeout_seconds: seconds.default(60),
        email_fallback: z.boolean().default(true),
      }),
      ledger: section({
        retention_seconds: seconds.default(7 * 86400),
        max_entries: z.number().int().min(100).default(100_000),
      }),
      pumping: section({
        enabled: z.boolean().default(true),
        country_sends_per_hour: z.number().int().min(1).default(2000),
        prefix_digits: z.number().int().min(3).max(12).default(6),
        prefix_sends_per_hour: z.number().int().min(1).default(60),
        block_window_seconds: seconds.default(3600),
        block_min_sends: z.number().int().min(1).default(10),
        block_min_conversion: z.number().min(0).max(1).default(0.2),
        // Codes younger than this are not judged: nobody could have verified them yet (docs/security.md, "SMS pumping").
        judge_after_seconds: seconds.default(60),
        watch_sends_per_hour: z.number().int().min(1).default(10),
        block_seconds: seconds.default(21600),
        disabled_in_production: z.boolean().default(false),
      }),
    }),
    newsletter: section({
      esp_url: url.default(''),
      feed_base_url: url.default(''),
      api_keys: section({
        head_a: text.default(''),
        head_b: text.default(''),
        head_c: text.default(''),
        head_d: text.default(''),
      }),
      timeout_seconds: seconds.default(5),
      feed_cache_seconds: seconds.default(60),
      // How long a feed's last good copy may still be served (marked stale) when the feed service fails.
      feed_stale_seconds: seconds.default(86400),
    }),
    recommendations: section({
      api_url: url.default(''),
      widget_id_home: text.default(''),
      widget_id_article: text.default(''),
      widget_id_home_toptrend: text.default(''),
      widget_id_article_toptrend: text.default(''),
      widget_id: text.default(''),
      user_id_prefix: text.default('usi'),
      timeout: seconds.default(10),
      debug: z.boolean().default(false),
      description_length: z.number().int().min(10).default(160),
    }),
    user_collector: section({
      base_url: url.default(''),
      ingest_login_path: text.default('/ingest/login'),
      internal_token: text.default(''),
      timeout: seconds.default(20),
      max_retries: z.number().int().min(0).max(20).default(3),
    }),
    security: section({
      secret: text.default(''),
      internal_key: text.default(''),
      guard_primitives: z.boolean().default(true),
      guard_primitives_off_in_production: z.boolean().default(false),
      proof_ttl_seconds: seconds.default(900),
    }),
    rate_limits: section({
      enabled: z.boolean().default(true),
      disabled_in_production: z.boolean().default(false),
      sends_per_identifier_per_hour: z.number().int().min(1).default(20),
      sends_per_ip_per_hour: z.number().int().min(1).default(100),
      verifies_per_ip_per_minute: z.number().int().min(1).default(30),
      lookups_per_ip_per_minute: z.number().int().min(1).default(30),
      // The short window of docs/security.md: a stranger who spends someone's sends locks them out for minutes.
      sends_per_recipient: z.number().int().min(1).default(5),
      recipient_window_seconds: seconds.default(600),
      lookups_per_account_per_hour: z.number().int().min(1).default(10),
      password_logins_per_ip: z.number().int().min(1).default(30),
      password_logins_per_email: z.number().int().min(1).default(5),
      password_login_window_seconds: seconds.default(900),
      registrations_per_ip_per_hour: z.number().int().min(1).default(10),
      subscriptions_per_ip_per_hour: z.number().int().min(1).default(20),
      subscriptions_per_email_per_day: z.number().int().min(1).default(5),
      // Kept with the limits off: it guards the keys themselves, not a budget a gateway could keep (docs/security.md).
      wrong_keys_per_ip: z.number().int().min(1).default(5),
      wrong_key_lockout_seconds: seconds.default(900),
      // One verified history (src/domain/limits/verified-history.ts) for two defences: the pumping caps and blocks, and the bot challenge's wider signals, spare it (0: no one has one).
      verified_history_days: z.number().int().min(0).max(3650).default(90),
    }),
    // The bot challenge before a code or a mail is sent (docs/security.md, "Bot challenge").
    challenge: z
      .strictObject({
        // Unset: adaptive in production, off elsewhere (load.ts decides, knowing the environment).
        mode: z.enum(['off', 'adaptive', 'always']).optional(),
        off_in_production: z.boolean().default(false),
        provider: z.enum(['pow', 'turnstile', 'hcaptcha']).default('pow'),
        ttl_seconds: seconds.default(300),
        pow_difficulty: z.number().int().min(1000).max(10_000_000).default(100_000),
        // The proof of work grows harder with the pressure (docs/security.md, "Harder under pressure").
        pow_pressure_step: z.number().min(1).max(16).default(4),
        pow_pressure_max: z.number().min(1).max(1024).default(64),
        site_key: text.default(''),
        secret_key: text.default(''),
        verify_url: url.default(''),
        timeout_seconds: seconds.default(5),
        client_sends: z.number().int().min(1).default(5),
        client_identifiers: z.number().int().min(1).default(3),
        client_verify_failures: z.number().int().min(1).default(5),
        password_failures: z.number().int().min(1).default(3),
        destination_share: z.number().min(0).max(1).default(0.5),
        window_seconds: seconds.default(3600),
        refusal_seconds: seconds.default(900),
        // The same client signals on the wider networks a client sits in (docs/security.md, "Budgets that nest"): crossing one challenges the network's new identifiers only.
        network_56: networkBudget({ sends: 20, identifiers: 8, verify_failures: 10, refused: 3 }),
        network_48: networkBudget({ sends: 60, identifiers: 20, verify_failures: 30, refused: 10 }),
        network_24: networkBudget({ sends: 600, identifiers: 400, verify_failures: 150, refused: 30 }),
        // New numbers per minute to a country or a range against their own last hours (docs/security.md, "Velocity").
        velocity_baseline_hours: z.number().int().min(1).max(24).default(3),
        velocity_factor: z.number().min(1).default(4),
        country_velocity_floor: z.number().int().min(1).default(30),
        range_velocity_floor: z.number().int().min(1).default(5),
      })
      .superRefine((challenge, check) => {
        if (challenge.provider === 'pow') return;
        for (const key of ['site_key', 'secret_key'] as const) {
          if (challenge[key] === '') check.addIssue({ code: 'custom', path: [key], message: `is required with provider ${challenge.provider}` });
        }
      })
      .prefault({}),
    metrics: section({
      token: text.default(''),
      host: text.default('127.0.0.1'),
      port: port.default(0),
      open_in_production: z.boolean().default(false),
    }),
    sandbox: section({
      enabled: z.boolean().default(false),
    }),
    demo: section({
      enabled: z.boolean().default(false),
      enabled_in_production: z.boolean().default(false),
    }),
    funnel: section({
      enabled: z.boolean().default(true),
      read_key: text.default(''),
      flush_ms: z.number().int().min(0).max(60_000).default(1000),
      idle_seconds: z.number().int().min(10).max(3600).default(900),
    }),
  });

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

/** Keys whose values are secrets: never logged, masked in diagnostics. */
export const secretKeys = [
  'identity.api_token',
  'mail.pass',
  'sms.api_key',
  // Each provider's credentials (api_key, auth_token).
  'sms.providers',
  'newsletter.api_keys',
  'user_collector.internal_token',
  'security.secret',
  'security.internal_key',
  'metrics.token',
  'funnel.read_key',
  'challenge.secret_key',
  'redis.password',
  // A Redis URL may carry the password (`redis://:pass@host`).
  'redis.url',
  // The fixed codes of test identifiers: whoever reads them logs in as those accounts.
  'otp.test_numbers',
] as const;
