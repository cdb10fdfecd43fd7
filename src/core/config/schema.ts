import { z } from 'zod';

/*
 * One schema for the whole configuration. Every key the service will ever read is declared from day one,
 * so one file serves every version; unknown keys are refused (strict objects) so typos surface.
 * Defaults are the contract's (docs/contract.md#limits). Environment values arrive as strings or JSON scalars, so string
 * fields accept numbers (an `aid` of digits) and list fields accept comma-separated strings.
 * Each key's meaning is its field's `.describe()`: the configuration reference (docs/operations.md)
 * prints it, so a key is declared, defaulted and explained in one place.
 */

const text = z.preprocess((v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v), z.string());
const seconds = z.number().int().min(1);
const port = z.number().int().min(0).max(65535);
const list = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : v,
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
    check.addIssue({
      code: 'custom',
      message:
        '"*" is refused: answers allow credentials (the __utp cookie), so every site could call the API in its visitors\' name; list the frontend origins, e.g. https://login.example.com',
    });
    return;
  }
  let origin = '';
  try {
    const parsed = new URL(v);
    if (parsed.protocol === 'https:' || parsed.protocol === 'http:') origin = parsed.origin;
  } catch {
    // Not a URL at all: refused below.
  }
  if (origin !== v)
    check.addIssue({
      code: 'custom',
      message: `must be an origin as a browser sends it: scheme://host[:port], lower case, no path or trailing slash${origin ? ` (${origin})` : ''}`,
    });
});
const url = text.refine((v) => v === '' || /^https?:\/\/[^\s]+$/.test(v), 'must be an http(s) URL or empty');
const section = <T extends z.ZodRawShape>(shape: T) => {
  const object = z.strictObject(shape);
  // prefault: an absent section is parsed as {}, so its keys' defaults apply.
  return object.prefault({} as z.input<typeof object>);
};
/**
 * The bot challenge's client signals on one wider network (a /56, a /48, an IPv4 /24): each a count
 * within `challenge.window_seconds` (refusals: `refusal_seconds`). `network` names it in the meanings.
 */
const networkBudget = (
  network: string,
  defaults: { sends: number; identifiers: number; verify_failures: number; refused: number },
) => {
  const signal = `Adaptive signal on ${network}:`;
  return section({
    sends: z
      .number()
      .int()
      .min(1)
      .default(defaults.sends)
      .describe(
        `${signal} requests to send from all its clients within \`challenge.window_seconds\` before its new identifiers (no code verified in \`rate_limits.verified_history_days\`) are challenged (docs/security.md, "Budgets that nest").`,
      ),
    identifiers: z
      .number()
      .int()
      .min(1)
      .default(defaults.identifiers)
      .describe(
        `${signal} distinct identifiers asked for from it within the window before its new identifiers are challenged.`,
      ),
    verify_failures: z
      .number()
      .int()
      .min(1)
      .default(defaults.verify_failures)
      .describe(`${signal} wrong codes from it within the window after which its new identifiers are challenged.`),
    refused: z
      .number()
      .int()
      .min(1)
      .default(defaults.refused)
      .describe(
        `${signal} requests from it refused by a limit or a wrong key within \`challenge.refusal_seconds\` after which its new identifiers are challenged.`,
      ),
  });
};
/** A locale as templates/<locale>/ names it: a language subtag, optionally a region (`it`, `en`, `pt-br`). */
const localeTag = /^[a-z]{2,3}(-[a-z0-9]{2,8})?$/;
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
      check.addIssue({
        code: 'custom',
        message: `is not valid JSON: in the environment this ${shape} is one JSON ${shape === 'list' ? 'list' : 'object'} (${example})`,
      });
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
const regions = list.pipe(
  z.array(
    z
      .string()
      .trim()
      .toUpperCase()
      .regex(/^[A-Z]{2}$/, 'must be an ISO 3166 alpha-2 region such as IT'),
  ),
);
/*
 * One SMS provider of `sms.providers`. `name` labels metrics, the ledger and its receipt URL
 * (/_sms/receipts/<name>), so it is a bounded slug; empty takes the kind's name.
 */
const smsProviderCommon = {
  name: z
    .string()
    .regex(/^([a-z][a-z0-9_-]{0,31})?$/, 'must be a short lower-case name such as twilio-eu')
    .default(''),
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
const twilioSender: [
  (p: { from: string; messaging_service_sid: string }) => boolean,
  { message: string; path: string[] },
] = [
  (p) => p.from !== '' || p.messaging_service_sid !== '',
  { message: 'needs from or messaging_service_sid', path: ['from'] },
];
const smsProvider = z.discriminatedUnion('kind', [
  // The contract's HTTP gateway; empty url, key or sender fall back to sms.api_url, sms.api_key, sms.sender.
  z.strictObject({
    kind: z.literal('gateway'),
    ...smsProviderCommon,
    api_url: url.default(''),
    api_key: text.default(''),
    sender: text.default(''),
  }),
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
    api_version: text
      .pipe(z.string().regex(/^v\d+\.\d+$/, 'must be a Graph API version such as v21.0'))
      .default('v21.0'),
  }),
  // WhatsApp through Twilio: `whatsapp:` addresses and a Content Template (its SID) with the code as variable 1.
  z
    .strictObject({
      kind: z.literal('twilio_whatsapp'),
      ...smsProviderCommon,
      ...twilioAccount,
      content_sid: text.pipe(z.string().regex(/^HX[0-9a-fA-F]{32}$/, 'must be a Content Template SID (HX...)')),
    })
    .refine(...twilioSender),
]);
export type SmsProviderConfig = z.infer<typeof smsProvider>;
const smsProviderName = (provider: SmsProviderConfig): string => provider.name || provider.kind;

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
    z
      .string()
      .trim()
      .toUpperCase()
      .regex(/^([A-Z]{2}|DEFAULT)$/, 'must be an ISO 3166 alpha-2 region such as IT, or default'),
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
  const { trust_proxy: legacy, trust_proxy_hops: hops } = server as {
    trust_proxy?: unknown;
    trust_proxy_hops?: unknown;
  };
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

export const configSchema = z.strictObject({
  server: z
    .preprocess(
      trustProxyAsHops,
      z.strictObject({
        host: text
          .default('127.0.0.1')
          .describe('Address to listen on. `0.0.0.0` to accept connections from other hosts (behind a load balancer).'),
        port: port.default(8080).describe('Port to listen on; 0 picks a free one (the log line `listening` names it).'),
        cors_origins: list
          .pipe(z.array(corsOrigin))
          .default([])
          .describe(
            "Browser origins allowed to call the API with credentials (exact match, e.g. `https://login.example.com`: scheme, host and port as the browser sends them, no path). `*` is refused: with credentials it would let every site call the API in its visitors' name (docs/decisions.md). Empty: no cross-origin access.",
          ),
        body_limit: z
          .number()
          .int()
          .min(1024)
          .default(64 * 1024)
          .describe('Largest accepted JSON body in bytes; a bigger one answers 413 `payload_too_large`.'),
        // Deprecated for trust_proxy_hops (read as 1 or 0 by trustProxyAsHops); kept one release, warned at start.
        trust_proxy: z
          .boolean()
          .optional()
          .describe(
            'Deprecated, removed in the next release: set `server.trust_proxy_hops` instead. Read as `trust_proxy_hops: 1` when true and 0 when false, with a `warn` line at start (before, true took the *first* `X-Forwarded-For` entry, which the client writes). Set beside `trust_proxy_hops` with another meaning, the service refuses to start.',
          ),
        trust_proxy_hops: z
          .number()
          .int()
          .min(0)
          .default(0)
          .describe(
            "How many proxies in front of the service append the address they saw to the forwarded header (`server.forwarded_header`): 1 for one nginx or load balancer, 2 for a CDN in front of a load balancer. The client, for every per-client limit, is the entry that many from the *right*; fewer entries than hops, or no address there, and the connection's own address counts. Above 0, `X-Forwarded-Proto` and `X-Forwarded-Host` are trusted too. 0: forwarded headers are ignored. Never more than the proxies that really append: each extra hop lets the client choose its address again.",
          ),
        forwarded_header: z
          .enum(['x-forwarded-for', 'forwarded'])
          .default('x-forwarded-for')
          .describe(
            'Which header the proxies of `server.trust_proxy_hops` append to: `x-forwarded-for`, or `forwarded` (RFC 7239, its `for=` parameters). Only this one is read, whatever else a request carries: name the one your proxies write, or a client names itself in the other.',
          ),
        cookie_domain: text
          .default('')
          .describe(
            'Domain attribute of the `__utp` cookie (e.g. `.example.com` to share it across subdomains). Empty: host-only cookie.',
          ),
        cookie_max_age_seconds: seconds
          .default(30 * 24 * 3600)
          .describe('Lifetime of the `__utp` cookie with `stay_logged_in` when the token does not carry `expires_in`.'),
        shutdown_grace_seconds: seconds
          .default(10)
          .describe(
            'On SIGTERM/SIGINT, how long in-flight requests may take to finish before their connections are closed.',
          ),
        headers_timeout_seconds: seconds
          .max(30)
          .default(15)
          .describe(
            'How long a client may take to send its request headers before the connection is closed (408). At most 30.',
          ),
        request_timeout_seconds: seconds
          .max(30)
          .default(30)
          .describe(
            'How long a client may take to send a whole request, headers and body, before the connection is closed (408). At most 30.',
          ),
        keep_alive_timeout_seconds: seconds
          .max(30)
          .default(5)
          .describe(
            'How long an idle keep-alive connection is kept open for the next request. At most 30; keep it below the idle timeout of a load balancer in front.',
          ),
        max_connections_per_client: z
          .number()
          .int()
          .min(0)
          .default(64)
          .describe(
            'Connections one client address may hold open at once; more are closed on arrival. 0: no cap. Not applied with `server.trust_proxy_hops` above 0 (every connection comes from the proxy: cap per client there).',
          ),
      }),
    )
    .prefault({}),
  debug: z
    .boolean()
    .default(false)
    .describe(
      'Adds `idp_debug` and the `debug` call trace to answers (docs/contract.md#addressing-and-envelope). Refused in production.',
    ),
  log: section({
    level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('Log level of the JSON log lines on stdout. `info` writes one line per request and per upstream call.'),
  }),
  otp: z
    .strictObject({
      ttl_seconds: seconds.default(300).describe('Lifetime of a one-time code (`expires_in`).'),
      length: z
        .number()
        .int()
        .min(4)
        .max(10)
        .default(6)
        .describe(
          'Digits of a one-time code. In production `otp.max_attempts` / 10^length must stay under 1 in 10,000 (4 digits are refused; docs/security.md).',
        ),
      resend_cooldown_seconds: seconds
        .default(60)
        .describe(
          'Minimum time between two sends for the same key, and between two codes delivered to the same phone or inbox whatever their key and spelling (`already_sent` with `retry_after` before it).',
        ),
      debug: z
        .boolean()
        .default(false)
        .describe('Returns the plain code in answers (`data.otp`, `otp.otp`). For tests only; refused in production.'),
      max_attempts: z
        .number()
        .int()
        .min(1)
        .default(5)
        .describe(
          'Wrong guesses a pending code allows before it is burned (`too_many_attempts`, even for the right code, until it expires; the next send still waits out the cooldown). In production at most 10^(length-4) - 1: 99 for 6 digits.',
        ),
      store: z
        .enum(['memory', 'redis'])
        .default('memory')
        .describe(
          'Where pending codes, cooldowns and rate-limit counters live: `memory` (one instance) or `redis` (several instances sharing `redis.url`, or `redis.cluster`).',
        ),
      max_records: z
        .number()
        .int()
        .min(1)
        .default(1_000_000)
        .describe('Most pending codes the memory store holds, so memory stays bounded under a flood.'),
      log_file: text
        .default('logs/otp.log')
        .describe('The OTP debug log (requests and responses, prefix `[OTP]`, codes never written). Empty: off.'),
      test_numbers: testNumbers
        .default({})
        .describe(
          'Test identifiers for app-store review and QA: a map of E.164 phone or email to a fixed code of `otp.length` digits (in the environment one JSON object, `OTP__TEST_NUMBERS=\'{"+393330000000":"123456"}\'`). Nothing is sent to them and their fixed code verifies; expiry, attempts, cooldown and rate limits apply as to any identifier. Listed (masked, without codes) in a warning at start-up; refused in production unless `otp.test_numbers_in_production` (docs/otp.md).',
        ),
      test_numbers_in_production: z
        .boolean()
        .default(false)
        .describe(
          'Allows `otp.test_numbers` in production (an app-store review account on the live service). Every test identifier is then an account anyone who learns its code can enter.',
        ),
    })
    .superRefine((otp, check) => {
      // A fixed code must be one the service could have generated: otp.length digits.
      for (const [identifier, code] of Object.entries(otp.test_numbers)) {
        if (!isTestIdentifier(identifier)) {
          check.addIssue({
            code: 'custom',
            path: ['test_numbers', identifier],
            message: 'the identifier must be an E.164 phone (+393331234567) or an email',
          });
        }
        if (!new RegExp(`^\\d{${otp.length}}$`).test(code)) {
          check.addIssue({
            code: 'custom',
            path: ['test_numbers', identifier],
            message: `the code must be ${otp.length} digits (otp.length)`,
          });
        }
      }
    })
    .prefault({}),
  redis: section({
    url: text
      .default('redis://127.0.0.1:6379')
      .describe(
        'Redis connection URL (`redis://[:password@]host:port[/db]`, `rediss://` for TLS) used when `otp.store` is `redis` and `redis.cluster` is empty.',
      ),
    // Braces would set a hash tag of their own and move keys out of the slots the scripts rely on.
    key_prefix: text
      .refine((v) => !/[{}]/.test(v), 'must not contain { or }')
      .default('lfa:')
      .describe(
        'Prefix of every Redis key the service writes, so several services can share one Redis. No `{` or `}`: braces would make a hash tag of their own.',
      ),
    cluster: list
      .pipe(z.array(hostPort))
      .default([])
      .describe(
        'Seed nodes of a Redis Cluster as `host:port` (a list; `REDIS__CLUSTER=10.0.0.1:7000,10.0.0.2:7000`). Non-empty: the service uses the Cluster client, learns the other nodes from these, and ignores `redis.url`. Empty: one server at `redis.url`.',
      ),
    // AUTH and TLS of managed Redis: a cluster's seeds carry no credentials, so they live here.
    username: text
      .default('')
      .describe(
        "ACL user that `redis.cluster`'s nodes authenticate as (Redis 6+; empty: `default`). A single server takes it from `redis.url` when the URL carries credentials, else from here (with `redis.password`).",
      ),
    password: text
      .default('')
      .describe(
        "Password (AUTH) of `redis.cluster`'s nodes, as managed cluster-mode Redis requires (ElastiCache/MemoryDB, Azure Cache, Redis Cloud). A single server takes it from `redis.url` when the URL carries credentials, else from here, so the secret can stay out of the URL. Empty: no AUTH.",
      ),
    tls: z
      .boolean()
      .default(false)
      .describe(
        "TLS to `redis.cluster`'s nodes (certificates checked against the system CAs and the node's host name; seeds are not resolved to addresses first, so a certificate for the cluster's host name matches). Also turns TLS on for a single server, as a `rediss://` `redis.url` does by itself.",
      ),
  }),
  database: section({
    url: text
      .refine((v) => v === '' || /^postgres(ql)?:\/\/\S+$/.test(v), 'must be a postgres:// URL or empty')
      .default('')
      .describe(
        'PostgreSQL connection URL (`postgres://user:password@host:5432/db`) of the durable store that keeps passkeys (docs/passkeys.md). Empty: the embedded PGlite (PostgreSQL in WebAssembly, in process) with the same SQL, in `database.embedded_dir`. Required in production when `passkeys.enabled`. Read only when passkeys are enabled.',
      ),
    embedded_dir: text
      .default('')
      .describe(
        'Folder where the embedded database (PGlite) keeps its files when `database.url` is empty, so credentials survive a restart (`.data/pglite`). Empty: in memory, lost at exit (tests).',
      ),
    pool_size: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(5)
      .describe('Connections to PostgreSQL each instance keeps at most (with `database.url`).'),
  }),
  passkeys: section({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'Offers passkeys beside the codes (docs/passkeys.md): the Passkey* actions answer, and the credentials live in the durable store (`database.*`). false: those actions answer `passkeys_disabled` and no database is opened. In production it needs `passkeys.rp_id`, `passkeys.origins` and `database.url`.',
      ),
    rp_id: text
      .default('')
      .describe(
        'Relying party id of the passkeys: the registrable domain the login page is served from (`example.com`), which every passkey is bound to for good. Empty outside production: `localhost`.',
      ),
    rp_name: text.default('Login').describe('Relying party name a browser may show beside a passkey.'),
    origins: list
      .pipe(z.array(corsOrigin))
      .default([])
      .describe(
        'Origins a passkey ceremony may come from (`https://login.example.com`), as the browser writes them in clientDataJSON; each must be the rp id or under it. Empty outside production: `http://localhost:<server.port>`.',
      ),
    challenge_ttl_seconds: z
      .number()
      .int()
      .min(30)
      .max(600)
      .default(300)
      .describe(
        'How long the options of one ceremony (enrolment or login) stay good: its challenge is refused after this, and once used.',
      ),
  }),
  identity: section({
    base_url: url
      .default('')
      .describe(
        "Base URL of the identity provider; each endpoint URL below defaults to it plus the contract's path (docs/contract.md#upstream-calls).",
      ),
    aid: text.default('').describe('Application id (`aid`) sent with every identity call.'),
    api_token: text.default('').describe('Publisher API token for identity calls.'),
    timeout_seconds: seconds.default(10).describe('Timeout of each identity call.'),
    user_update_url: url
      .default('')
      .describe('Full URL of the profile update endpoint (default: base_url + `/api/v3/publisher/user/update`).'),
    user_get_v3_url: url
      .default('')
      .describe('Full URL of the profile read endpoint (default: base_url + `/api/v3/publisher/user/get`).'),
    users_get_url: url
      .default('')
      .describe('Full URL of the lookup-by-email endpoint (default: base_url + `/id/api/v1/publisher/users/get`).'),
    token_url: url
      .default('')
      .describe('Full URL of the token endpoint (default: base_url + `/id/api/v1/publisher/token`).'),
    user_search_url: url
      .default('')
      .describe('Full URL of the phone search endpoint (default: base_url + `/api/v3/publisher/user/search`).'),
    user_access_list_url: url
      .default('')
      .describe('Full URL of the access list endpoint (default: base_url + `/api/v3/user/access/list`).'),
    identity_token_url: url
      .default('')
      .describe('Full URL of the refresh endpoint (default: base_url + `/id/api/v1/identity/token`).'),
  }),
  mail: section({
    host: text.default('').describe('SMTP server host.'),
    port: port.default(587).describe('SMTP server port.'),
    secure: z
      .boolean()
      .default(false)
      .describe('TLS from the first byte (port 465); false uses STARTTLS when the server offers it.'),
    user: text.default('').describe('SMTP user; empty for no authentication.'),
    pass: text.default('').describe('SMTP password.'),
    from_address: text.default('').describe('Sender address of code emails. Empty: the email channel is skipped.'),
    from_name: text.default('').describe('Sender display name of code emails.'),
    app_name: text.default('Login').describe('Application name in the templates (`{{APP_NAME}}`).'),
    default_locale: text
      .pipe(z.string().toLowerCase().regex(localeTag, 'must be a locale such as it or en'))
      .default('it')
      .describe(
        'Language of code messages (templates/<locale>/) and error texts when the request names none that the service has, by its `locale` field or `Accept-Language` (docs/otp.md). Must have its templates folder.',
      ),
    timeout_seconds: seconds.default(10).describe('Timeout of each SMTP delivery.'),
  }),
  sms: section({
    api_url: url.default('').describe('SMS gateway URL. Empty (or no `api_key`): the SMS channel is skipped.'),
    api_key: text.default('').describe('Bearer key of the SMS gateway.'),
    sender: text.default('').describe('Sender name or number of code SMS.'),
    default_region: text
      .default('IT')
      .describe('Region (ISO 3166 alpha-2) of phone numbers typed without a country code.'),
    allowed_regions: list
      .default([])
      .describe('Regions a code may be sent to by SMS (toll-fraud guard). Empty: only `sms.default_region`.'),
    // The WebOTP line (`@<domain> #<code>`) binds a code to the site that may autofill it: a bare host name, no scheme, port or path.
    webotp_domain: text
      .pipe(z.string().trim().toLowerCase())
      .refine((v) => v === '' || z.hostname().safeParse(v).success, 'must be a host name such as login.example.com')
      .default('')
      .describe(
        'Host name of the site that reads codes (e.g. `login.example.com`). When set, every code SMS ends with the line `@<domain> #<code>`, the domain-bound format that browsers (WebOTP) and Android autofill read. Empty: no such line.',
      ),
    timeout_seconds: seconds.default(10).describe('Timeout of each SMS gateway call.'),
    providers: jsonList(smsProvider)
      .refine(
        (providers) => new Set(providers.map(smsProviderName)).size === providers.length,
        'provider names must be unique (set name on providers of one kind)',
      )
      .default([])
      .describe(
        "SMS providers in failover order (docs/sms.md); in the environment one JSON list. Each: `kind` (`gateway`, the contract's gateway; `twilio`, Twilio Messages), `name` (labels metrics, the ledger and its receipt URL; default the kind), `countries` (regions it serves; empty: all), `weight` (share of first attempts among the eligible; 0: backup only), `timeout_seconds` (default `sms.timeout_seconds`), and its credentials: gateway `api_url`, `api_key`, `sender` (each defaults to `sms.*`); twilio `account_sid`, `auth_token`, `from` or `messaging_service_sid`, `api_url` (default `https://api.twilio.com`). WhatsApp kinds serve the `whatsapp` channel of `sms.channels`: `whatsapp_cloud` (Meta's Cloud API) `phone_number_id`, `access_token`, `template` (an approved authentication template with a copy-code button), `language` (the template's language code; empty: the code's locale), `app_secret` and `verify_token` (its webhook; empty `app_secret`: no receipts), `api_url` (default `https://graph.facebook.com`), `api_version` (default `v21.0`); `twilio_whatsapp` `account_sid`, `auth_token`, `from` (the WhatsApp sender, E.164) or `messaging_service_sid`, `content_sid` (the Content Template, the code as variable 1), `api_url`. Empty: the one gateway of `sms.api_url`, as before.",
      ),
    channels: phoneChannels
      .default({})
      .describe(
        'Per region (ISO code) or `default`, the channels a phone\'s code is tried on, in order: `sms`, `whatsapp` (e.g. `{"IT": ["whatsapp", "sms"], "default": ["sms"]}`; in the environment one JSON object). A channel whose providers all refuse the message falls back to the next within the request; a WhatsApp message whose receipt says it failed, or that was not read within `sms.receipts.timeout_seconds`, sends the phone\'s next code by the next channel. Empty: `sms` everywhere.',
      ),
    channel_choice: z
      .boolean()
      .default(false)
      .describe(
        "Whether a caller may name the channel (`channel` on otp_generate, FeLogin, FeAddPhone): one of the region's `sms.channels`, tried first, the others after it. false: a `channel` field is `invalid_request`.",
      ),
    breaker: section({
      failures: z
        .number()
        .int()
        .min(1)
        .default(5)
        .describe(
          'Consecutive failures (no answer, timeout, 5xx, 429) after which a provider is skipped (its circuit opens).',
        ),
      open_seconds: seconds
        .default(30)
        .describe(
          'How long an open circuit skips its provider; then one send probes it (half-open): a success closes it, a failure opens it again.',
        ),
    }),
    receipts: section({
      callback_base_url: url
        .default('')
        .describe(
          'Public base URL of this service (`https://login.example.com`) that providers post delivery receipts to (`/_sms/receipts/<provider name>`). Empty: no receipts are asked for. https only in production.',
        ),
      timeout_seconds: seconds
        .default(60)
        .describe(
          'How long after acceptance an SMS without a delivery receipt counts as undelivered (`unknown`) for the email fallback.',
        ),
      email_fallback: z
        .boolean()
        .default(true)
        .describe(
          'When the last SMS to a phone failed to deliver or had no receipt in time, the next code for that phone also goes, once, to the confirmed email of the account holding the phone (`otp.fallback: email` in the answer).',
        ),
    }),
    ledger: section({
      retention_seconds: seconds
        .default(7 * 86400)
        .describe(
          'How long each ledger entry (one per code sent: masked recipient, country, provider, delivery, conversion) is kept.',
        ),
      max_entries: z
        .number()
        .int()
        .min(100)
        .default(100_000)
        .describe(
          'Most ledger entries the memory store keeps (the oldest go first); Redis keeps them for `retention_seconds`.',
        ),
    }),
    pumping: section({
      enabled: z
        .boolean()
        .default(true)
        .describe(
          'The SMS pumping defence (docs/security.md): velocity caps per country and per number prefix, and the automatic block of a range whose codes are not verified. false is refused in production unless `sms.pumping.disabled_in_production`.',
        ),
      country_sends_per_hour: z
        .number()
        .int()
        .min(1)
        .default(2000)
        .describe('Code SMS per destination country per hour, all recipients together (`sms_destination_limited`).'),
      prefix_digits: z
        .number()
        .int()
        .min(3)
        .max(12)
        .default(6)
        .describe(
          'Digits of the E.164 number (country code included, no `+`) that name a destination range for the prefix cap and the automatic block.',
        ),
      prefix_sends_per_hour: z
        .number()
        .int()
        .min(1)
        .default(60)
        .describe('Code SMS per destination range per hour (`sms_destination_limited`).'),
      block_window_seconds: seconds
        .default(3600)
        .describe(
          "Window over which a range's conversion (codes verified / codes judged) is measured: this window and the one before.",
        ),
      block_min_sends: z
        .number()
        .int()
        .min(1)
        .default(10)
        .describe(
          'Judged codes (older than `judge_after_seconds`) to a range within the window before its conversion is judged.',
        ),
      block_min_conversion: z
        .number()
        .min(0)
        .max(1)
        .default(0.2)
        .describe(
          'Conversion below which a range with enough judged codes is put on watch, then blocked (`sms_destination_blocked`), 0 to 1.',
        ),
      // Codes younger than this are not judged: nobody could have verified them yet (docs/security.md, "SMS pumping").
      judge_after_seconds: seconds
        .default(60)
        .describe(
          "Age a code must reach before the conversion check counts it (its outcome is known: verified or not). Codes seconds old are never judged, so a burst of real people or a store just started is no evidence of pumping. Each second of it costs a campaign's rate in SMS before the first finding.",
        ),
      watch_sends_per_hour: z
        .number()
        .int()
        .min(1)
        .default(10)
        .describe(
          'Code SMS per range per hour while the range is on watch (its first finding, until its codes are verified again or one grace later it is blocked); replaces `prefix_sends_per_hour` there (`sms_destination_limited`, `limit: "watch"`).',
        ),
      block_seconds: seconds
        .default(21600)
        .describe(
          "How long an automatic block lasts, unless the range's codes are verified late (lifted at once) or an operator lifts it sooner.",
        ),
      disabled_in_production: z
        .boolean()
        .default(false)
        .describe(
          'Allows `sms.pumping.enabled: false` in production (a provider that screens premium ranges itself). Without either, a bot farm can send codes to numbers it is paid to terminate.',
        ),
    }),
  }),
  newsletter: section({
    esp_url: url.default('').describe('Base URL of the mailing-list subscription service.'),
    feed_base_url: url.default('').describe('Base URL of the newsletter feeds (one document per feed id).'),
    api_keys: section({
      head_a: text.default('').describe('Mailing-list API key of headline `head_a`.'),
      head_b: text.default('').describe('Mailing-list API key of headline `head_b`.'),
      head_c: text.default('').describe('Mailing-list API key of headline `head_c`.'),
      head_d: text.default('').describe('Mailing-list API key of headline `head_d`.'),
    }),
    timeout_seconds: seconds.default(5).describe('Timeout of each mailing-list and feed call.'),
    feed_cache_seconds: seconds
      .default(60)
      .describe('How long a fetched feed is served from memory before it is fetched again.'),
    feed_stale_seconds: seconds
      .default(86400)
      .describe("How long a feed's last good copy may still be served (marked stale) while the feed service fails."),
  }),
  recommendations: section({
    api_url: url.default('').describe('Widget data endpoint of the recommendation service.'),
    widget_id_home: text.default('').describe('Widget for a home page (no `url`, no `toptrend`).'),
    widget_id_article: text.default('').describe('Widget for an article page (`url`, no `toptrend`).'),
    widget_id_home_toptrend: text.default('').describe('Widget for a home page with `toptrend`.'),
    widget_id_article_toptrend: text.default('').describe('Widget for an article page with `toptrend`.'),
    widget_id: text.default('').describe('Legacy alias: used when `widget_id_article` is empty.'),
    user_id_prefix: text.default('usi').describe("Key inside `user.ids` that carries the caller's `udi`."),
    timeout: seconds.default(10).describe('Timeout of each recommendation call, in seconds.'),
    debug: z
      .boolean()
      .default(false)
      .describe(
        'false: answers only `{response: {items}}` as the service sent them; true: the envelope with mapped `articles` and `recommendations_debug`.',
      ),
    description_length: z
      .number()
      .int()
      .min(10)
      .default(160)
      .describe('Characters an article description is truncated to.'),
  }),
  user_collector: section({
    base_url: url.default('').describe('Base URL of the user collector (login ingest).'),
    ingest_login_path: text.default('/ingest/login').describe('Path of the login ingest endpoint.'),
    internal_token: text.default('').describe('Value of the `x-internal-token` header of ingest calls.'),
    timeout: seconds.default(20).describe('Timeout of each ingest call, in seconds.'),
    max_retries: z
      .number()
      .int()
      .min(0)
      .max(20)
      .default(3)
      .describe('Further delivery attempts of a login event after a failed one.'),
  }),
  security: section({
    secret: text
      .default('')
      .describe(
        'HMAC key for stored codes and signed proofs: the same on every instance; at least 32 characters in production. Empty outside production: a random per-process key.',
      ),
    internal_key: text
      .default('')
      .describe(
        'Value of the `x-internal-key` header that lets a trusted backend call guarded primitives without a proof (it issues tokens for any uid). At least 32 characters in production; wrong values are limited per client. Empty: no such bypass.',
      ),
    guard_primitives: z
      .boolean()
      .default(true)
      .describe(
        'Primitives that issue tokens or read/change profiles require a proof or the internal key (`proof_required`). false only for a legacy frontend; it is refused in production unless `security.guard_primitives_off_in_production`.',
      ),
    guard_primitives_off_in_production: z
      .boolean()
      .default(false)
      .describe(
        'Allows `security.guard_primitives: false` in production (a legacy frontend that cannot send proofs yet). Anyone can then issue a token for any uid and read any profile.',
      ),
    proof_ttl_seconds: seconds
      .default(900)
      .describe('Lifetime of the signed proofs that carry a flow between requests.'),
  }),
  rate_limits: section({
    enabled: z
      .boolean()
      .default(true)
      .describe(
        'Switches all rate limits on or off. false is refused in production unless `rate_limits.disabled_in_production`.',
      ),
    disabled_in_production: z
      .boolean()
      .default(false)
      .describe(
        'Allows `rate_limits.enabled: false` in production (limits kept by a gateway in front instead). Without either, codes can be sent and guessed at will.',
      ),
    sends_per_identifier_per_hour: z
      .number()
      .int()
      .min(1)
      .default(20)
      .describe(
        'Hourly ceiling of codes issued for one OTP key and of codes delivered to one phone or email (docs/security.md).',
      ),
    sends_per_ip_per_hour: z
      .number()
      .int()
      .min(1)
      .default(100)
      .describe('Codes requested from one client IP per hour.'),
    verifies_per_ip_per_minute: z
      .number()
      .int()
      .min(1)
      .default(30)
      .describe('Code verifications from one client IP per minute.'),
    lookups_per_ip_per_minute: z
      .number()
      .int()
      .min(1)
      .default(30)
      .describe(
        'Account lookups without a verification proof (search_user, get_user_email: they reveal whether an account exists) from one client IP per minute.',
      ),
    // The short window of docs/security.md: a stranger who spends someone's sends locks them out for minutes.
    sends_per_recipient: z
      .number()
      .int()
      .min(1)
      .default(5)
      .describe(
        'Codes issued for one OTP key, and codes delivered to one phone or inbox (every spelling of an email: `+tag`, Gmail dots), per `recipient_window_seconds` (the short window that stops SMS bombing of one phone through many keys).',
      ),
    recipient_window_seconds: seconds
      .default(600)
      .describe(
        "Window of `sends_per_recipient`: a stranger who spends someone's sends locks them out for at most this long.",
      ),
    lookups_per_account_per_hour: z
      .number()
      .int()
      .min(1)
      .default(10)
      .describe(
        'Checks of whether a phone belongs to another account (`phone_taken` from FeAddPhone, FeUpdateProfile, update_profile) per account per hour; they also count against `lookups_per_ip_per_minute`.',
      ),
    password_logins_per_ip: z
      .number()
      .int()
      .min(1)
      .default(30)
      .describe('Password logins from one client IP per `password_login_window_seconds`.'),
    password_logins_per_email: z
      .number()
      .int()
      .min(1)
      .default(5)
      .describe('Password logins for one email (its inbox: every spelling) per `password_login_window_seconds`.'),
    password_login_window_seconds: seconds.default(900).describe('Window of the password-login limits.'),
    registrations_per_ip_per_hour: z
      .number()
      .int()
      .min(1)
      .default(10)
      .describe(
        'Account registrations (`register`, FeRegister) one client IP may ask of the identity provider per hour; each refusal also spends the proof it came with (docs/security.md).',
      ),
    subscriptions_per_ip_per_hour: z
      .number()
      .int()
      .min(1)
      .default(20)
      .describe(
        '`newsletter_subscribe` calls one client IP may make per hour: it needs no proof, and each one mails a stranger.',
      ),
    subscriptions_per_email_per_day: z
      .number()
      .int()
      .min(1)
      .default(5)
      .describe('`newsletter_subscribe` calls for one email (its inbox: every spelling) per day, whoever asks.'),
    passkey_logins_per_credential_per_hour: z
      .number()
      .int()
      .min(1)
      .default(30)
      .describe(
        '`PasskeyLogin` attempts naming one passkey per hour, whoever sends them (besides `verifies_per_ip_per_minute` per client): a passkey someone hammers is held back (docs/passkeys.md).',
      ),
    // Kept with the limits off: it guards the keys themselves, not a budget a gateway could keep (docs/security.md).
    wrong_keys_per_ip: z
      .number()
      .int()
      .min(1)
      .default(5)
      .describe(
        'Wrong keys (`x-internal-key`, `x-funnel-key`, the `metrics.token` bearer) one client IP may present per `wrong_key_lockout_seconds`; past it, every key from that client, the right one too, is refused (429) until the window ends. Counted in the OTP store, so across instances; kept with `rate_limits.enabled: false`, since it guards the keys themselves.',
      ),
    wrong_key_lockout_seconds: seconds
      .default(900)
      .describe(
        "Window of `wrong_keys_per_ip`, counted from a client's first wrong key: a client that goes past the limit is locked out of every key until it ends.",
      ),
    // One verified history (src/domain/limits/verified-history.ts) for two defences: the pumping caps and blocks, and the bot challenge's wider signals, spare it (0: no one has one).
    verified_history_days: z
      .number()
      .int()
      .min(0)
      .max(3650)
      .default(90)
      .describe(
        "How long a phone or an email whose code was verified counts as someone with a verified history (one fact, kept once as a keyed digest in the rate limiter's store, never the address, and read by two defences). The SMS pumping defence does not refuse such a phone by the country or range caps nor by a blocked range: the caps apply to new numbers, so a campaign that fills a country's cap does not lock its established users out (the per-phone cooldown and hourly cap still apply). The bot challenge's wider networks' signals and the destination's rate signals challenge new identifiers only, not these. 0: no one has a history.",
      ),
  }),
  // The bot challenge before a code or a mail is sent (docs/security.md, "Bot challenge").
  challenge: z
    .strictObject({
      // Unset: adaptive in production, off elsewhere (load.ts decides, knowing the environment).
      mode: z
        .enum(['off', 'adaptive', 'always'])
        .optional()
        .describe(
          'The bot challenge before a code or a mail is sent (docs/security.md, "Bot challenge"): `adaptive` asks it only when one of the signals below crossed its threshold, `always` of every such request, `off` never. Unset: `adaptive` in production, `off` elsewhere. `off` in production is refused unless `challenge.off_in_production`. Nothing is asked with `rate_limits.enabled: false`.',
        ),
      off_in_production: z
        .boolean()
        .default(false)
        .describe('Acknowledges `challenge.mode: off` in production (a warn line at every start says so).'),
      provider: z
        .enum(['pow', 'turnstile', 'hcaptcha'])
        .default('pow')
        .describe(
          "`pow`: a self-hosted proof of work (ALTCHA's protocol; the page's `altcha` widget solves it, no third party); `turnstile` (Cloudflare) or `hcaptcha`: their widget in the page, the token checked at their siteverify endpoint with `challenge.secret_key`.",
        ),
      ttl_seconds: seconds
        .default(300)
        .describe(
          'How long an issued challenge may be solved and its solution used; a solution is spent on use, once across instances.',
        ),
      pow_difficulty: z
        .number()
        .int()
        .min(1000)
        .max(10_000_000)
        .default(100_000)
        .describe(
          "The SHA-256 counter a `pow` solver must reach, drawn between half of it and it per challenge: the expected work is three quarters of it in hashes (docs/security.md has the time it takes in Chromium and the server's verification cost).",
        ),
      // The proof of work grows harder with the pressure (docs/security.md, "Harder under pressure").
      pow_pressure_step: z
        .number()
        .min(1)
        .max(16)
        .default(4)
        .describe(
          'A `pow` challenge\'s difficulty is `pow_difficulty` times this for each adaptive signal crossed beyond the first and for each doubling of a spike past its threshold (docs/security.md, "Harder under pressure"). 1: one difficulty whatever the pressure.',
        ),
      pow_pressure_max: z
        .number()
        .min(1)
        .max(1024)
        .default(64)
        .describe(
          'The most the pressure multiplies `challenge.pow_difficulty` by: 64 makes the hardest challenge 6,400,000 at the default (about 8 s of one core).',
        ),
      site_key: text
        .default('')
        .describe(
          'The Turnstile or hCaptcha site key the page renders its widget with (given in `data.challenge`). Required with those providers.',
        ),
      secret_key: text
        .default('')
        .describe('The Turnstile or hCaptcha secret for siteverify. Required with those providers.'),
      verify_url: url
        .default('')
        .describe("Overrides the provider's siteverify URL (the sandbox's fakes, a test). Empty: the provider's own."),
      timeout_seconds: seconds
        .default(5)
        .describe(
          'Timeout of one siteverify call; a provider that does not answer refuses the send (`challenge_required`, `data.solution: "unverified"`).',
        ),
      client_sends: z
        .number()
        .int()
        .min(1)
        .default(5)
        .describe(
          'Adaptive signal: requests to send a code or a mail from one client within `challenge.window_seconds` before the next is challenged. An honest journey sends one to three codes.',
        ),
      client_identifiers: z
        .number()
        .int()
        .min(1)
        .default(3)
        .describe(
          'Adaptive signal: distinct identifiers (phones, emails) one client asks codes or mails for within the window before the next is challenged. A person uses one or two.',
        ),
      client_verify_failures: z
        .number()
        .int()
        .min(1)
        .default(5)
        .describe(
          'Adaptive signal: wrong codes from one client within the window after which its sends are challenged.',
        ),
      password_failures: z
        .number()
        .int()
        .min(1)
        .default(3)
        .describe(
          'Adaptive signal: wrong passwords for one email, or from one client, within the window after which a password login is challenged.',
        ),
      destination_share: z
        .number()
        .min(0)
        .max(1)
        .default(0.5)
        .describe(
          "Adaptive signal: the share of a destination's hourly cap (`sms.pumping.prefix_sends_per_hour` for its range, `country_sends_per_hour` for its country) after which the next code SMS to it are challenged: 0.5 challenges the second half of the cap instead of letting it go to whoever asks. Raising the caps for your volume raises these with them. 0 challenges every SMS; 1 never on this signal.",
        ),
      window_seconds: seconds.default(3600).describe('The window the adaptive signals are counted in.'),
      refusal_seconds: seconds
        .default(900)
        .describe(
          'Adaptive signal: how long a client refused by a limit (`rate_limited`, a wrong key) has its sends challenged.',
        ),
      // The same client signals on the wider networks a client sits in (docs/security.md, "Budgets that nest"): crossing one challenges the network's new identifiers only.
      network_56: networkBudget('a /56 (an IPv6 home or small site: 256 /64s)', {
        sends: 20,
        identifiers: 8,
        verify_failures: 10,
        refused: 3,
      }),
      network_48: networkBudget("a /48 (an IPv6 site or a carrier's pool: 65,536 /64s)", {
        sends: 60,
        identifiers: 20,
        verify_failures: 30,
        refused: 10,
      }),
      network_24: networkBudget("an IPv4 /24 (a hosting block, a carrier's NAT pool)", {
        sends: 600,
        identifiers: 400,
        verify_failures: 150,
        refused: 30,
      }),
      // New numbers per minute to a country or a range against their own last hours (docs/security.md, "Velocity").
      velocity_baseline_hours: z
        .number()
        .int()
        .min(1)
        .max(24)
        .default(3)
        .describe(
          "Velocity signals: the hours whose average minute is a country's or a range's baseline (new numbers, no verified history, asked codes for).",
        ),
      velocity_factor: z
        .number()
        .min(1)
        .default(4)
        .describe(
          'Velocity signals: new numbers in the last minute to a country or a range above this many times its baseline minute (and above its floor) challenge the next new numbers there (`country_velocity`, `range_velocity`; docs/security.md, "Velocity").',
        ),
      country_velocity_floor: z
        .number()
        .int()
        .min(1)
        .default(30)
        .describe(
          'Velocity signal: new numbers a minute to one country that are never a spike, however quiet its last hours (a handful to a quiet country is not challenged).',
        ),
      range_velocity_floor: z
        .number()
        .int()
        .min(1)
        .default(5)
        .describe(
          'Velocity signal: new numbers a minute to one range (`sms.pumping.prefix_digits`) that are never a spike, however quiet its last hours.',
        ),
    })
    .superRefine((challenge, check) => {
      if (challenge.provider === 'pow') return;
      for (const key of ['site_key', 'secret_key'] as const) {
        if (challenge[key] === '')
          check.addIssue({ code: 'custom', path: [key], message: `is required with provider ${challenge.provider}` });
      }
    })
    .prefault({}),
  metrics: section({
    token: text
      .default('')
      .describe(
        'Bearer token that `GET /metrics` on the service port requires; at least 32 characters in production. Empty: /metrics is not served on the service port (use `metrics.port`).',
      ),
    host: text.default('127.0.0.1').describe('Address of the separate metrics listener (with `metrics.port`).'),
    port: port
      .default(0)
      .describe(
        'Port of a separate listener that serves only `GET /metrics`, without a token (keep it off the public network). 0: no separate listener.',
      ),
    open_in_production: z
      .boolean()
      .default(false)
      .describe(
        "Allows the metrics listener on a host other than loopback in production (Prometheus scraping a pod's address). Whoever reaches `metrics.host:metrics.port` reads the metrics without a token.",
      ),
  }),
  tracing: section({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'Exports OpenTelemetry traces over OTLP/HTTP (protobuf): a span per request, its action, and each upstream call, with no personal data. Off: nothing is traced and nothing is sent.',
      ),
    otlp_url: text
      .default('')
      .describe(
        "The collector's traces endpoint, such as http://collector:4318/v1/traces. Empty: the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` variables, else http://localhost:4318/v1/traces.",
      ),
    sample_ratio: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe(
        "Share of new traces kept (0 to 1). A request that continues a trusted caller's trace follows the caller's decision.",
      ),
    service_name: text
      .default('login-frontend-api')
      .describe('`service.name` of the exported spans: what the tracing backend lists the service as.'),
  }),
  sandbox: section({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'Embedded fake upstreams for local runs. Defaults to true only when nothing is configured (no CONFIG_FILE, no configuration variable but `SERVER__HOST` and `SERVER__PORT`) and NODE_ENV is unset, development or test; anything else configured and NODE_ENV unset is production, which refuses it. With NODE_ENV development or test, true runs against the fakes whatever else is configured.',
      ),
  }),
  demo: section({
    enabled: z
      .boolean()
      .default(false)
      .describe('Serves the demo page. Refused in production unless `demo.enabled_in_production`.'),
    enabled_in_production: z
      .boolean()
      .default(false)
      .describe(
        'Allows `demo.enabled` in production (a staging service run with NODE_ENV=production). The demo page drives real journeys against real accounts.',
      ),
  }),
  funnel: section({
    enabled: z
      .boolean()
      .default(true)
      .describe(
        'Counts the login journeys in people (docs/funnel.md): each journey, under an anonymous random id carried in its proofs and code record, once per screen it reaches, its refusals, repeats and times, into the store of `otp.store`; and the requests into the `lfa_funnel_*` metrics. Counts and durations only, never a phone, email, address or account.',
      ),
    read_key: text
      .default('')
      .describe(
        'A read-only key for the funnel statistics (`GET /flows/stats`, `/flows/funnel`, the figures on `/flows`), sent as header `x-funnel-key`, so dashboards need not hold `security.internal_key` (which is also accepted). At least 32 characters in production; wrong values are limited per client. Empty: only the internal key (and the sandbox) may read them.',
      ),
    flush_ms: z
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(1000)
      .describe(
        'How long an instance gathers its funnel counts before writing them to the store in one write (the answers never wait for it). 0: after every request.',
      ),
    idle_seconds: z
      .number()
      .int()
      .min(10)
      .max(3600)
      .default(900)
      .describe(
        "How long a person may wait on a screen without a code before the funnel counts them as stopped there rather than in progress (on a code screen: the code's lifetime, otp.ttl_seconds). 900 s is a proof's default lifetime: past it, they cannot go on anyway.",
      ),
  }),
});

export type Config = z.infer<typeof configSchema>;

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
  // So may a PostgreSQL URL.
  'database.url',
  // The fixed codes of test identifiers: whoever reads them logs in as those accounts.
  'otp.test_numbers',
] as const;
