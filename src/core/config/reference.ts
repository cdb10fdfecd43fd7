import { z } from 'zod';
import { configSchema, secretKeys } from './schema';

/*
 * The configuration reference of docs/operations.md, rendered from the schema itself: every
 * key with its type and default comes from `configSchema`, so the document cannot drift from
 * what the loader accepts. Only the meanings are written here, one line per key; a key added
 * to the schema without a line here fails test/core/config/reference.test.ts.
 */

export const configKeyMeanings: Record<string, string> = {
  'server.host': 'Address to listen on. `0.0.0.0` to accept connections from other hosts (behind a load balancer).',
  'server.port': 'Port to listen on; 0 picks a free one (the log line `listening` names it).',
  'server.cors_origins': 'Browser origins allowed to call the API with credentials (exact match, e.g. `https://login.example.com`: scheme, host and port as the browser sends them, no path). `*` is refused: with credentials it would let every site call the API in its visitors\' name (docs/decisions.md). Empty: no cross-origin access.',
  'server.body_limit': 'Largest accepted JSON body in bytes; a bigger one answers 413 `payload_too_large`.',
  'server.trust_proxy': 'Deprecated, removed in the next release: set `server.trust_proxy_hops` instead. Read as `trust_proxy_hops: 1` when true and 0 when false, with a `warn` line at start (before, true took the *first* `X-Forwarded-For` entry, which the client writes). Set beside `trust_proxy_hops` with another meaning, the service refuses to start.',
  'server.trust_proxy_hops': 'How many proxies in front of the service append the address they saw to the forwarded header (`server.forwarded_header`): 1 for one nginx or load balancer, 2 for a CDN in front of a load balancer. The client, for every per-client limit, is the entry that many from the *right*; fewer entries than hops, or no address there, and the connection\'s own address counts. Above 0, `X-Forwarded-Proto` and `X-Forwarded-Host` are trusted too. 0: forwarded headers are ignored. Never more than the proxies that really append: each extra hop lets the client choose its address again.',
  'server.forwarded_header': 'Which header the proxies of `server.trust_proxy_hops` append to: `x-forwarded-for`, or `forwarded` (RFC 7239, its `for=` parameters). Only this one is read, whatever else a request carries: name the one your proxies write, or a client names itself in the other.',
  'server.cookie_domain': 'Domain attribute of the `__utp` cookie (e.g. `.example.com` to share it across subdomains). Empty: host-only cookie.',
  'server.cookie_max_age_seconds': 'Lifetime of the `__utp` cookie with `stay_logged_in` when the token does not carry `expires_in`.',
  'server.shutdown_grace_seconds': 'On SIGTERM/SIGINT, how long in-flight requests may take to finish before their connections are closed.',
  'server.headers_timeout_seconds': 'How long a client may take to send its request headers before the connection is closed (408). At most 30.',
  'server.request_timeout_seconds': 'How long a client may take to send a whole request, headers and body, before the connection is closed (408). At most 30.',
  'server.keep_alive_timeout_seconds': 'How long an idle keep-alive connection is kept open for the next request. At most 30; keep it below the idle timeout of a load balancer in front.',
  'server.max_connections_per_client': 'Connections one client address may hold open at once; more are closed on arrival. 0: no cap. Not applied with `server.trust_proxy_hops` above 0 (every connection comes from the proxy: cap per client there).',
  debug: 'Adds `idp_debug` and the `debug` call trace to answers (docs/contract.md#addressing-and-envelope). Refused in production.',
  'log.level': 'Log level of the JSON log lines on stdout. `info` writes one line per request and per upstream call.',
  'otp.ttl_seconds': 'Lifetime of a one-time code (`expires_in`).',
  'otp.length': 'Digits of a one-time code. In production `otp.max_attempts` / 10^length must stay under 1 in 10,000 (4 digits are refused; docs/security.md).',
  'otp.resend_cooldown_seconds': 'Minimum time between two sends for the same key, and between two codes delivered to the same phone or inbox whatever their key and spelling (`already_sent` with `retry_after` before it).',
  'otp.debug': 'Returns the plain code in answers (`data.otp`, `otp.otp`). For tests only; refused in production.',
  'otp.max_attempts': 'Wrong guesses a pending code allows before it is burned (`too_many_attempts`, even for the right code, until it expires; the next send still waits out the cooldown). In production at most 10^(length-4) - 1: 99 for 6 digits.',
  'otp.store': 'Where pending codes, cooldowns and rate-limit counters live: `memory` (one instance) or `redis` (several instances sharing `redis.url`, or `redis.cluster`).',
  'otp.max_records': 'Most pending codes the memory store holds, so memory stays bounded under a flood.',
  'otp.log_file': "The OTP debug log (requests and responses, prefix `[OTP]`, codes never written). Empty: off.",
  'otp.test_numbers': 'Test identifiers for app-store review and QA: a map of E.164 phone or email to a fixed code of `otp.length` digits (in the environment one JSON object, `OTP__TEST_NUMBERS=\'{"+393330000000":"123456"}\'`). Nothing is sent to them and their fixed code verifies; expiry, attempts, cooldown and rate limits apply as to any identifier. Listed (masked, without codes) in a warning at start-up; refused in production unless `otp.test_numbers_in_production` (docs/otp.md).',
  'otp.test_numbers_in_production': 'Allows `otp.test_numbers` in production (an app-store review account on the live service). Every test identifier is then an account anyone who learns its code can enter.',
  'redis.url': 'Redis connection URL (`redis://[:password@]host:port[/db]`, `rediss://` for TLS) used when `otp.store` is `redis` and `redis.cluster` is empty.',
  'redis.key_prefix': 'Prefix of every Redis key the service writes, so several services can share one Redis. No `{` or `}`: braces would make a hash tag of their own.',
  'redis.cluster': 'Seed nodes of a Redis Cluster as `host:port` (a list; `REDIS__CLUSTER=10.0.0.1:7000,10.0.0.2:7000`). Non-empty: the service uses the Cluster client, learns the other nodes from these, and ignores `redis.url`. Empty: one server at `redis.url`.',
  'redis.username': 'ACL user that `redis.cluster`\'s nodes authenticate as (Redis 6+; empty: `default`). A single server takes it from `redis.url` when the URL carries credentials, else from here (with `redis.password`).',
  'redis.password': 'Password (AUTH) of `redis.cluster`\'s nodes, as managed cluster-mode Redis requires (ElastiCache/MemoryDB, Azure Cache, Redis Cloud). A single server takes it from `redis.url` when the URL carries credentials, else from here, so the secret can stay out of the URL. Empty: no AUTH.',
  'redis.tls': 'TLS to `redis.cluster`\'s nodes (certificates checked against the system CAs and the node\'s host name; seeds are not resolved to addresses first, so a certificate for the cluster\'s host name matches). Also turns TLS on for a single server, as a `rediss://` `redis.url` does by itself.',
  'identity.base_url': 'Base URL of the identity provider; each endpoint URL below defaults to it plus the contract\'s path (docs/contract.md#upstream-calls).',
  'identity.aid': 'Application id (`aid`) sent with every identity call.',
  'identity.api_token': 'Publisher API token for identity calls.',
  'identity.timeout_seconds': 'Timeout of each identity call.',
  'identity.user_update_url': 'Full URL of the profile update endpoint (default: base_url + `/api/v3/publisher/user/update`).',
  'identity.user_get_v3_url': 'Full URL of the profile read endpoint (default: base_url + `/api/v3/publisher/user/get`).',
  'identity.users_get_url': 'Full URL of the lookup-by-email endpoint (default: base_url + `/id/api/v1/publisher/users/get`).',
  'identity.token_url': 'Full URL of the token endpoint (default: base_url + `/id/api/v1/publisher/token`).',
  'identity.user_search_url': 'Full URL of the phone search endpoint (default: base_url + `/api/v3/publisher/user/search`).',
  'identity.user_access_list_url': 'Full URL of the access list endpoint (default: base_url + `/api/v3/user/access/list`).',
  'identity.identity_token_url': 'Full URL of the refresh endpoint (default: base_url + `/id/api/v1/identity/token`).',
  'mail.host': 'SMTP server host.',
  'mail.port': 'SMTP server port.',
  'mail.secure': 'TLS from the first byte (port 465); false uses STARTTLS when the server offers it.',
  'mail.user': 'SMTP user; empty for no authentication.',
  'mail.pass': 'SMTP password.',
  'mail.from_address': 'Sender address of code emails. Empty: the email channel is skipped.',
  'mail.from_name': 'Sender display name of code emails.',
  'mail.app_name': 'Application name in the templates (`{{APP_NAME}}`).',
  'mail.default_locale': 'Language of code messages (templates/<locale>/) and error texts when the request names none that the service has, by its `locale` field or `Accept-Language` (docs/otp.md). Must have its templates folder.',
  'mail.timeout_seconds': 'Timeout of each SMTP delivery.',
  'sms.api_url': 'SMS gateway URL. Empty (or no `api_key`): the SMS channel is skipped.',
  'sms.api_key': 'Bearer key of the SMS gateway.',
  'sms.sender': 'Sender name or number of code SMS.',
  'sms.default_region': 'Region (ISO 3166 alpha-2) of phone numbers typed without a country code.',
  'sms.allowed_regions': 'Regions a code may be sent to by SMS (toll-fraud guard). Empty: only `sms.default_region`.',
  'sms.webotp_domain': 'Host name of the site that reads codes (e.g. `login.example.com`). When set, every code SMS ends with the line `@<domain> #<code>`, the domain-bound format that browsers (WebOTP) and Android autofill read. Empty: no such line.',
  'sms.timeout_seconds': 'Timeout of each SMS gateway call.',
  'sms.providers': 'SMS providers in failover order (docs/sms.md); in the environment one JSON list. Each: `kind` (`gateway`, the contract\'s gateway; `twilio`, Twilio Messages), `name` (labels metrics, the ledger and its receipt URL; default the kind), `countries` (regions it serves; empty: all), `weight` (share of first attempts among the eligible; 0: backup only), `timeout_seconds` (default `sms.timeout_seconds`), and its credentials: gateway `api_url`, `api_key`, `sender` (each defaults to `sms.*`); twilio `account_sid`, `auth_token`, `from` or `messaging_service_sid`, `api_url` (default `https://api.twilio.com`). WhatsApp kinds serve the `whatsapp` channel of `sms.channels`: `whatsapp_cloud` (Meta\'s Cloud API) `phone_number_id`, `access_token`, `template` (an approved authentication template with a copy-code button), `language` (the template\'s language code; empty: the code\'s locale), `app_secret` and `verify_token` (its webhook; empty `app_secret`: no receipts), `api_url` (default `https://graph.facebook.com`), `api_version` (default `v21.0`); `twilio_whatsapp` `account_sid`, `auth_token`, `from` (the WhatsApp sender, E.164) or `messaging_service_sid`, `content_sid` (the Content Template, the code as variable 1), `api_url`. Empty: the one gateway of `sms.api_url`, as before.',
  'sms.channels': 'Per region (ISO code) or `default`, the channels a phone\'s code is tried on, in order: `sms`, `whatsapp` (e.g. `{"IT": ["whatsapp", "sms"], "default": ["sms"]}`; in the environment one JSON object). A channel whose providers all refuse the message falls back to the next within the request; a WhatsApp message whose receipt says it failed, or that was not read within `sms.receipts.timeout_seconds`, sends the phone\'s next code by the next channel. Empty: `sms` everywhere.',
  'sms.channel_choice': 'Whether a caller may name the channel (`channel` on otp_generate, FeLogin, FeAddPhone): one of the region\'s `sms.channels`, tried first, the others after it. false: a `channel` field is `invalid_request`.',
  'sms.breaker.failures': 'Consecutive failures (no answer, timeout, 5xx, 429) after which a provider is skipped (its circuit opens).',
  'sms.breaker.open_seconds': 'How long an open circuit skips its provider; then one send probes it (half-open): a success closes it, a failure opens it again.',
  'sms.receipts.callback_base_url': 'Public base URL of this service (`https://login.example.com`) that providers post delivery receipts to (`/_sms/receipts/<provider name>`). Empty: no receipts are asked for. https only in production.',
  'sms.receipts.timeout_seconds': 'How long after acceptance an SMS without a delivery receipt counts as undelivered (`unknown`) for the email fallback.',
  'sms.receipts.email_fallback': 'When the last SMS to a phone failed to deliver or had no receipt in time, the next code for that phone also goes, once, to the confirmed email of the account holding the phone (`otp.fallback: email` in the answer).',
  'sms.ledger.retention_seconds': 'How long each ledger entry (one per code sent: masked recipient, country, provider, delivery, conversion) is kept.',
  'sms.ledger.max_entries': 'Most ledger entries the memory store keeps (the oldest go first); Redis keeps them for `retention_seconds`.',
  'sms.pumping.enabled': 'The SMS pumping defence (docs/security.md): velocity caps per country and per number prefix, and the automatic block of a range whose codes are not verified. false is refused in production unless `sms.pumping.disabled_in_production`.',
  'sms.pumping.country_sends_per_hour': 'Code SMS per destination country per hour, all recipients together (`sms_destination_limited`).',
  'sms.pumping.prefix_digits': 'Digits of the E.164 number (country code included, no `+`) that name a destination range for the prefix cap and the automatic block.',
  'sms.pumping.prefix_sends_per_hour': 'Code SMS per destination range per hour (`sms_destination_limited`).',
  'sms.pumping.block_window_seconds': 'Window over which a range\'s conversion (codes verified / codes judged) is measured: this window and the one before.',
  'sms.pumping.block_min_sends': 'Judged codes (older than `judge_after_seconds`) to a range within the window before its conversion is judged.',
  'sms.pumping.block_min_conversion': 'Conversion below which a range with enough judged codes is put on watch, then blocked (`sms_destination_blocked`), 0 to 1.',
  'sms.pumping.judge_after_seconds': 'Age a code must reach before the conversion check counts it (its outcome is known: verified or not). Codes seconds old are never judged, so a burst of real people or a store just started is no evidence of pumping. Each second of it costs a campaign\'s rate in SMS before the first finding.',
  'sms.pumping.watch_sends_per_hour': 'Code SMS per range per hour while the range is on watch (its first finding, until its codes are verified again or one grace later it is blocked); replaces `prefix_sends_per_hour` there (`sms_destination_limited`, `limit: "watch"`).',
  'sms.pumping.block_seconds': 'How long an automatic block lasts, unless the range\'s codes are verified late (lifted at once) or an operator lifts it sooner.',
  'sms.pumping.disabled_in_production': 'Allows `sms.pumping.enabled: false` in production (a provider that screens premium ranges itself). Without either, a bot farm can send codes to numbers it is paid to terminate.',
  'newsletter.esp_url': 'Base URL of the mailing-list subscription service.',
  'newsletter.feed_base_url': 'Base URL of the newsletter feeds (one document per feed id).',
  'newsletter.api_keys.head_a': 'Mailing-list API key of headline `head_a`.',
  'newsletter.api_keys.head_b': 'Mailing-list API key of headline `head_b`.',
  'newsletter.api_keys.head_c': 'Mailing-list API key of headline `head_c`.',
  'newsletter.api_keys.head_d': 'Mailing-list API key of headline `head_d`.',
  'newsletter.timeout_seconds': 'Timeout of each mailing-list and feed call.',
  'newsletter.feed_cache_seconds': 'How long a fetched feed is served from memory before it is fetched again.',
  'newsletter.feed_stale_seconds': "How long a feed's last good copy may still be served (marked stale) while the feed service fails.",
  'recommendations.api_url': 'Widget data endpoint of the recommendation service.',
  'recommendations.widget_id_home': 'Widget for a home page (no `url`, no `toptrend`).',
  'recommendations.widget_id_article': 'Widget for an article page (`url`, no `toptrend`).',
  'recommendations.widget_id_home_toptrend': 'Widget for a home page with `toptrend`.',
  'recommendations.widget_id_article_toptrend': 'Widget for an article page with `toptrend`.',
  'recommendations.widget_id': 'Legacy alias: used when `widget_id_article` is empty.',
  'recommendations.user_id_prefix': 'Key inside `user.ids` that carries the caller\'s `udi`.',
  'recommendations.timeout': 'Timeout of each recommendation call, in seconds.',
  'recommendations.debug': 'false: answers only `{response: {items}}` as the service sent them; true: the envelope with mapped `articles` and `recommendations_debug`.',
  'recommendations.description_length': 'Characters an article description is truncated to.',
  'user_collector.base_url': 'Base URL of the user collector (login ingest).',
  'user_collector.ingest_login_path': 'Path of the login ingest endpoint.',
  'user_collector.internal_token': 'Value of the `x-internal-token` header of ingest calls.',
  'user_collector.timeout': 'Timeout of each ingest call, in seconds.',
  'user_collector.max_retries': 'Further delivery attempts of a login event after a failed one.',
  'security.secret': 'HMAC key for stored codes and signed proofs: the same on every instance; at least 32 characters in production. Empty outside production: a random per-process key.',
  'security.internal_key': 'Value of the `x-internal-key` header that lets a trusted backend call guarded primitives without a proof (it issues tokens for any uid). At least 32 characters in production; wrong values are limited per client. Empty: no such bypass.',
  'security.guard_primitives': 'Primitives that issue tokens or read/change profiles require a proof or the internal key (`proof_required`). false only for a legacy frontend; it is refused in production unless `security.guard_primitives_off_in_production`.',
  'security.guard_primitives_off_in_production': 'Allows `security.guard_primitives: false` in production (a legacy frontend that cannot send proofs yet). Anyone can then issue a token for any uid and read any profile.',
  'security.proof_ttl_seconds': 'Lifetime of the signed proofs that carry a flow between requests.',
  'rate_limits.enabled': 'Switches all rate limits on or off. false is refused in production unless `rate_limits.disabled_in_production`.',
  'rate_limits.disabled_in_production': 'Allows `rate_limits.enabled: false` in production (limits kept by a gateway in front instead). Without either, codes can be sent and guessed at will.',
  'rate_limits.sends_per_identifier_per_hour': 'Hourly ceiling of codes issued for one OTP key and of codes delivered to one phone or email (docs/security.md).',
  'rate_limits.sends_per_ip_per_hour': 'Codes requested from one client IP per hour.',
  'rate_limits.verifies_per_ip_per_minute': 'Code verifications from one client IP per minute.',
  'rate_limits.lookups_per_ip_per_minute': 'Account lookups without a verification proof (search_user, get_user_email: they reveal whether an account exists) from one client IP per minute.',
  'rate_limits.sends_per_recipient': 'Codes issued for one OTP key, and codes delivered to one phone or inbox (every spelling of an email: `+tag`, Gmail dots), per `recipient_window_seconds` (the short window that stops SMS bombing of one phone through many keys).',
  'rate_limits.recipient_window_seconds': 'Window of `sends_per_recipient`: a stranger who spends someone\'s sends locks them out for at most this long.',
  'rate_limits.lookups_per_account_per_hour': 'Checks of whether a phone belongs to another account (`phone_taken` from FeAddPhone, FeUpdateProfile, update_profile) per account per hour; they also count against `lookups_per_ip_per_minute`.',
  'rate_limits.password_logins_per_ip': 'Password logins from one client IP per `password_login_window_seconds`.',
  'rate_limits.password_logins_per_email': 'Password logins for one email (its inbox: every spelling) per `password_login_window_seconds`.',
  'rate_limits.password_login_window_seconds': 'Window of the password-login limits.',
  'rate_limits.registrations_per_ip_per_hour': 'Account registrations (`register`, FeRegister) one client IP may ask of the identity provider per hour; each refusal also spends the proof it came with (docs/security.md).',
  'rate_limits.subscriptions_per_ip_per_hour': '`newsletter_subscribe` calls one client IP may make per hour: it needs no proof, and each one mails a stranger.',
  'rate_limits.subscriptions_per_email_per_day': '`newsletter_subscribe` calls for one email (its inbox: every spelling) per day, whoever asks.',
  'rate_limits.wrong_keys_per_ip': 'Wrong keys (`x-internal-key`, `x-funnel-key`, the `metrics.token` bearer) one client IP may present per `wrong_key_lockout_seconds`; past it, every key from that client, the right one too, is refused (429) until the window ends. Counted in the OTP store, so across instances; kept with `rate_limits.enabled: false`, since it guards the keys themselves.',
  'rate_limits.wrong_key_lockout_seconds': 'Window of `wrong_keys_per_ip`, counted from a client\'s first wrong key: a client that goes past the limit is locked out of every key until it ends.',
  'rate_limits.verified_history_days': 'How long a phone or an email whose code was verified counts as someone with a verified history (one fact, kept once as a keyed digest in the rate limiter\'s store, never the address, and read by two defences). The SMS pumping defence does not refuse such a phone by the country or range caps nor by a blocked range: the caps apply to new numbers, so a campaign that fills a country\'s cap does not lock its established users out (the per-phone cooldown and hourly cap still apply). The bot challenge\'s wider networks\' signals and the destination\'s rate signals challenge new identifiers only, not these. 0: no one has a history.',
  'challenge.mode': 'The bot challenge before a code or a mail is sent (docs/security.md, "Bot challenge"): `adaptive` asks it only when one of the signals below crossed its threshold, `always` of every such request, `off` never. Unset: `adaptive` in production, `off` elsewhere. `off` in production is refused unless `challenge.off_in_production`. Nothing is asked with `rate_limits.enabled: false`.',
  'challenge.off_in_production': 'Acknowledges `challenge.mode: off` in production (a warn line at every start says so).',
  'challenge.provider': '`pow`: a self-hosted proof of work (ALTCHA\'s protocol; the page\'s `altcha` widget solves it, no third party); `turnstile` (Cloudflare) or `hcaptcha`: their widget in the page, the token checked at their siteverify endpoint with `challenge.secret_key`.',
  'challenge.ttl_seconds': 'How long an issued challenge may be solved and its solution used; a solution is spent on use, once across instances.',
  'challenge.pow_difficulty': 'The SHA-256 counter a `pow` solver must reach, drawn between half of it and it per challenge: the expected work is three quarters of it in hashes (docs/security.md has the time it takes in Chromium and the server\'s verification cost).',
  'challenge.pow_pressure_step': 'A `pow` challenge\'s difficulty is `pow_difficulty` times this for each adaptive signal crossed beyond the first and for each doubling of a spike past its threshold (docs/security.md, "Harder under pressure"). 1: one difficulty whatever the pressure.',
  'challenge.pow_pressure_max': 'The most the pressure multiplies `challenge.pow_difficulty` by: 64 makes the hardest challenge 6,400,000 at the default (about 8 s of one core).',
  'challenge.site_key': 'The Turnstile or hCaptcha site key the page renders its widget with (given in `data.challenge`). Required with those providers.',
  'challenge.secret_key': 'The Turnstile or hCaptcha secret for siteverify. Required with those providers.',
  'challenge.verify_url': 'Overrides the provider\'s siteverify URL (the sandbox\'s fakes, a test). Empty: the provider\'s own.',
  'challenge.timeout_seconds': 'Timeout of one siteverify call; a provider that does not answer refuses the send (`challenge_required`, `data.solution: "unverified"`).',
  'challenge.client_sends': 'Adaptive signal: requests to send a code or a mail from one client within `challenge.window_seconds` before the next is challenged. An honest journey sends one to three codes.',
  'challenge.client_identifiers': 'Adaptive signal: distinct identifiers (phones, emails) one client asks codes or mails for within the window before the next is challenged. A person uses one or two.',
  'challenge.client_verify_failures': 'Adaptive signal: wrong codes from one client within the window after which its sends are challenged.',
  'challenge.password_failures': 'Adaptive signal: wrong passwords for one email, or from one client, within the window after which a password login is challenged.',
  'challenge.destination_share': 'Adaptive signal: the share of a destination\'s hourly cap (`sms.pumping.prefix_sends_per_hour` for its range, `country_sends_per_hour` for its country) after which the next code SMS to it are challenged: 0.5 challenges the second half of the cap instead of letting it go to whoever asks. Raising the caps for your volume raises these with them. 0 challenges every SMS; 1 never on this signal.',
  'challenge.window_seconds': 'The window the adaptive signals are counted in.',
  'challenge.refusal_seconds': 'Adaptive signal: how long a client refused by a limit (`rate_limited`, a wrong key) has its sends challenged.',
  'challenge.network_56.sends': 'Adaptive signal on a /56 (an IPv6 home or small site: 256 /64s): requests to send from all its clients within `challenge.window_seconds` before its new identifiers (no code verified in `rate_limits.verified_history_days`) are challenged (docs/security.md, "Budgets that nest").',
  'challenge.network_56.identifiers': 'Adaptive signal on a /56 (an IPv6 home or small site: 256 /64s): distinct identifiers asked for from it within the window before its new identifiers are challenged.',
  'challenge.network_56.verify_failures': 'Adaptive signal on a /56 (an IPv6 home or small site: 256 /64s): wrong codes from it within the window after which its new identifiers are challenged.',
  'challenge.network_56.refused': 'Adaptive signal on a /56 (an IPv6 home or small site: 256 /64s): requests from it refused by a limit or a wrong key within `challenge.refusal_seconds` after which its new identifiers are challenged.',
  'challenge.network_48.sends': 'Adaptive signal on a /48 (an IPv6 site or a carrier\'s pool: 65,536 /64s): requests to send from all its clients within `challenge.window_seconds` before its new identifiers (no code verified in `rate_limits.verified_history_days`) are challenged (docs/security.md, "Budgets that nest").',
  'challenge.network_48.identifiers': 'Adaptive signal on a /48 (an IPv6 site or a carrier\'s pool: 65,536 /64s): distinct identifiers asked for from it within the window before its new identifiers are challenged.',
  'challenge.network_48.verify_failures': 'Adaptive signal on a /48 (an IPv6 site or a carrier\'s pool: 65,536 /64s): wrong codes from it within the window after which its new identifiers are challenged.',
  'challenge.network_48.refused': 'Adaptive signal on a /48 (an IPv6 site or a carrier\'s pool: 65,536 /64s): requests from it refused by a limit or a wrong key within `challenge.refusal_seconds` after which its new identifiers are challenged.',
  'challenge.network_24.sends': 'Adaptive signal on an IPv4 /24 (a hosting block, a carrier\'s NAT pool): requests to send from all its clients within `challenge.window_seconds` before its new identifiers (no code verified in `rate_limits.verified_history_days`) are challenged (docs/security.md, "Budgets that nest").',
  'challenge.network_24.identifiers': 'Adaptive signal on an IPv4 /24 (a hosting block, a carrier\'s NAT pool): distinct identifiers asked for from it within the window before its new identifiers are challenged.',
  'challenge.network_24.verify_failures': 'Adaptive signal on an IPv4 /24 (a hosting block, a carrier\'s NAT pool): wrong codes from it within the window after which its new identifiers are challenged.',
  'challenge.network_24.refused': 'Adaptive signal on an IPv4 /24 (a hosting block, a carrier\'s NAT pool): requests from it refused by a limit or a wrong key within `challenge.refusal_seconds` after which its new identifiers are challenged.',
  'challenge.velocity_baseline_hours': 'Velocity signals: the hours whose average minute is a country\'s or a range\'s baseline (new numbers, no verified history, asked codes for).',
  'challenge.velocity_factor': 'Velocity signals: new numbers in the last minute to a country or a range above this many times its baseline minute (and above its floor) challenge the next new numbers there (`country_velocity`, `range_velocity`; docs/security.md, "Velocity").',
  'challenge.country_velocity_floor': 'Velocity signal: new numbers a minute to one country that are never a spike, however quiet its last hours (a handful to a quiet country is not challenged).',
  'challenge.range_velocity_floor': 'Velocity signal: new numbers a minute to one range (`sms.pumping.prefix_digits`) that are never a spike, however quiet its last hours.',
  'metrics.token': 'Bearer token that `GET /metrics` on the service port requires; at least 32 characters in production. Empty: /metrics is not served on the service port (use `metrics.port`).',
  'metrics.host': 'Address of the separate metrics listener (with `metrics.port`).',
  'metrics.port': 'Port of a separate listener that serves only `GET /metrics`, without a token (keep it off the public network). 0: no separate listener.',
  'metrics.open_in_production': 'Allows the metrics listener on a host other than loopback in production (Prometheus scraping a pod\'s address). Whoever reaches `metrics.host:metrics.port` reads the metrics without a token.',
  'sandbox.enabled': 'Embedded fake upstreams for local runs. Defaults to true only when nothing is configured (no CONFIG_FILE, no configuration variable but `SERVER__HOST` and `SERVER__PORT`) and NODE_ENV is unset, development or test; anything else configured and NODE_ENV unset is production, which refuses it. With NODE_ENV development or test, true runs against the fakes whatever else is configured.',
  'demo.enabled': 'Serves the demo page. Refused in production unless `demo.enabled_in_production`.',
  'demo.enabled_in_production': 'Allows `demo.enabled` in production (a staging service run with NODE_ENV=production). The demo page drives real journeys against real accounts.',
  'funnel.enabled': 'Counts the login journeys in people (docs/funnel.md): each journey, under an anonymous random id carried in its proofs and code record, once per screen it reaches, its refusals, repeats and times, into the store of `otp.store`; and the requests into the `lfa_funnel_*` metrics. Counts and durations only, never a phone, email, address or account.',
  'funnel.read_key': 'A read-only key for the funnel statistics (`GET /flows/stats`, `/flows/funnel`, the figures on `/flows`), sent as header `x-funnel-key`, so dashboards need not hold `security.internal_key` (which is also accepted). At least 32 characters in production; wrong values are limited per client. Empty: only the internal key (and the sandbox) may read them.',
  'funnel.flush_ms': 'How long an instance gathers its funnel counts before writing them to the store in one write (the answers never wait for it). 0: after every request.',
  'funnel.idle_seconds': 'How long a person may wait on a screen without a code before the funnel counts them as stopped there rather than in progress (on a code screen: the code\'s lifetime, otp.ttl_seconds). 900 s is a proof\'s default lifetime: past it, they cannot go on anyway.',
};

export interface ConfigKey {
  /** Dotted key, e.g. `otp.ttl_seconds`. */
  key: string;
  /** Its environment variable, e.g. `OTP__TTL_SECONDS`. */
  env: string;
  type: string;
  default: unknown;
  secret: boolean;
  meaning: string | undefined;
}

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  default?: unknown;
}

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return `one of ${schema.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  // A list of objects (sms.providers) cannot be comma-separated: it is read as one JSON list.
  if (schema.type === 'array' && (schema.items?.type === undefined || schema.items.type === 'object')) return 'list of objects (one JSON list in the environment)';
  if (schema.type === 'array') return `list of ${schema.items?.type}s (comma-separated in the environment)`;
  if (schema.type === 'object') return 'map (one JSON object in the environment)';
  if (schema.type === 'integer' || schema.type === 'number') {
    const max = schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER ? schema.maximum : undefined;
    if (schema.minimum !== undefined && max !== undefined) return `${schema.type} ${schema.minimum}..${max}`;
    if (schema.minimum !== undefined) return `${schema.type} >= ${schema.minimum}`;
  }
  return schema.type ?? 'value';
}

/** Every key of the configuration schema, in schema order. */
export function configKeys(): ConfigKey[] {
  const root = z.toJSONSchema(configSchema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  const keys: ConfigKey[] = [];
  const walk = (node: JsonSchema, path: string[]) => {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const keyPath = [...path, name];
      if (child.type === 'object' && child.properties) {
        walk(child, keyPath);
        continue;
      }
      const key = keyPath.join('.');
      keys.push({
        key,
        env: keyPath.map((p) => p.toUpperCase()).join('__'),
        type: typeOf(child),
        default: child.default,
        secret: secretKeys.some((secret) => key === secret || key.startsWith(`${secret}.`)),
        meaning: configKeyMeanings[key],
      });
    }
  };
  walk(root, []);
  return keys;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const shownDefault = (value: unknown) => (value === undefined ? '*(unset)*' : value === '' ? '*(empty)*' : `\`${JSON.stringify(value)}\``);

/** The reference as Markdown: one table per top-level section. */
export function renderConfigReference(): string {
  const bySection = new Map<string, ConfigKey[]>();
  for (const key of configKeys()) {
    const section = key.key.includes('.') ? key.key.split('.')[0]! : '(top level)';
    bySection.set(section, [...(bySection.get(section) ?? []), key]);
  }
  const out: string[] = [];
  for (const [section, keys] of bySection) {
    out.push(`### ${section === '(top level)' ? 'Top-level keys' : `\`${section}\``}`, '');
    out.push('| Key | Type | Default | Environment | Meaning |', '|---|---|---|---|---|');
    for (const key of keys) {
      const type = key.secret ? `${key.type}, **secret**` : key.type;
      out.push(`| \`${key.key}\` | ${cell(type)} | ${cell(shownDefault(key.default))} | \`${key.env}\` | ${cell(key.meaning ?? '')} |`);
    }
    out.push('');
  }
  return out.join('\n');
}
