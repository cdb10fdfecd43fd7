import { z } from 'zod';
import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { JOURNEY_IDS } from '../../machines';
import { KEY_HEADERS } from '../domain/keys';
import { RECEIPT_PATH } from '../domain/sms/router';
import { TWILIO_SIGNATURE_HEADER } from '../clients/twilio';
import { META_SIGNATURE_HEADER } from '../clients/whatsapp-cloud';

/*
 * The operator and product endpoints of the OpenAPI document: the probes, the metrics, the
 * funnel, the SMS ledger and receipts, the pages, and the sandbox's routes. Their guards are the
 * ones the code checks: `x-internal-key` (src/domain/guard.ts, diagnosticsCaller: open in the
 * sandbox), `x-funnel-key` (funnelReader), `Authorization: Bearer <metrics.token>`
 * (src/http/keys.ts) and each SMS provider's signature (src/clients/twilio.ts,
 * src/clients/whatsapp-cloud.ts). A route that exists only in the sandbox is marked
 * `x-sandbox-only`. test/docs/routes.test.ts holds that every route the app mounts is here and
 * every path here is mounted.
 */

export const SECURITY_SCHEMES = {
  internalKey: {
    type: 'apiKey',
    in: 'header',
    name: KEY_HEADERS.internal,
    description:
      'Equal to security.internal_key: lets a trusted backend call the guarded primitives without a proof, and opens the operator endpoints (open without it in the sandbox). A client past rate_limits.wrong_keys_per_ip wrong keys is answered 429 rate_limited (data.limit wrong_keys_per_ip) for every key, the right one too, until its lockout ends.',
  },
  funnelKey: {
    type: 'apiKey',
    in: 'header',
    name: KEY_HEADERS.funnel,
    description:
      'Equal to funnel.read_key: reads the funnel (/flows/stats, /flows/funnel) and nothing else, so a dashboard holds no key that opens the guard. Wrong keys count towards the same lockout as x-internal-key.',
  },
  metricsToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      '`Authorization: Bearer <metrics.token>` on the service port. Without metrics.token the service port serves no metrics (404 metrics_not_enabled); the metrics listener (metrics.port) serves them without a token.',
  },
  twilioSignature: {
    type: 'apiKey',
    in: 'header',
    name: TWILIO_SIGNATURE_HEADER,
    description:
      "Twilio's status callback signature: base64 HMAC-SHA1, keyed with the provider's auth token, over the callback URL (sms.receipts.callback_base_url + path and query) followed by the form's fields sorted by name. 403 when it does not hold.",
  },
  metaSignature: {
    type: 'apiKey',
    in: 'header',
    name: META_SIGNATURE_HEADER,
    description:
      "Meta's webhook signature (whatsapp_cloud providers): `sha256=` and the hex HMAC-SHA256 of the raw body, keyed with the app secret. 403 when it does not hold.",
  },
  metaVerifyToken: {
    type: 'apiKey',
    in: 'query',
    name: 'hub.verify_token',
    description: "Meta's webhook handshake: the provider's verify_token. 403 when it is not.",
  },
} as const;

type Security = NonNullable<RouteConfig['security']>;
const OPERATOR: Security = [{ internalKey: [] }];
const FUNNEL_READER: Security = [{ internalKey: [] }, { funnelKey: [] }];
const PUBLIC: Security = [{}];

/** What each failure status of these endpoints means here. */
const FAILURES: Readonly<Record<number, string>> = {
  400: 'malformed_json: the body is not JSON.',
  401: 'unauthorized: the key this endpoint asks for is missing or wrong (open in the sandbox).',
  404: 'unknown_action: the route does not exist in this configuration (it says which, above).',
  405: 'method_not_allowed: Allow names the methods the resource takes.',
  413: 'payload_too_large.',
  415: 'unsupported_media_type.',
  429: 'rate_limited: too many wrong keys from this client (data.limit wrong_keys_per_ip); Retry-After says when to retry.',
  500: 'internal_error.',
};
const retryAfter = z.string().regex(/^\d+$/).describe('Seconds to wait before retrying.');

export interface OperationSchemas {
  /** The success envelope, `data` open. */
  envelope: z.ZodType;
  /** The failure envelope, any reason. */
  failure: z.ZodType;
}

const text = (type: string, description: string) => ({
  description,
  content: { [type]: { schema: z.string() } },
});

export function registerOperatorPaths(registry: OpenAPIRegistry, { envelope, failure }: OperationSchemas): void {
  const failures = (statuses: number[], allow: string) =>
    Object.fromEntries(
      statuses.map((status) => [
        status,
        {
          description: FAILURES[status]!,
          ...(status === 405
            ? { headers: z.object({ Allow: z.literal(allow).describe('The methods the resource takes.') }) }
            : status === 429
              ? { headers: z.object({ 'Retry-After': retryAfter }) }
              : {}),
          content: { 'application/json': { schema: failure } },
        },
      ]),
    );
  const json = (description: string) => ({ description, content: { 'application/json': { schema: envelope } } });
  const get = (path: string, route: Omit<RouteConfig, 'method' | 'path'>, sandboxOnly = false, allow = 'GET, HEAD') =>
    registry.registerPath({
      method: 'get',
      path,
      ...route,
      responses: { ...route.responses, ...failures([405, 500], allow) },
      ...(sandboxOnly ? { 'x-sandbox-only': true } : {}),
    });

  // ---- probes, metrics, this document ----
  const operations = { tags: ['Operations'] };
  get('/healthz', {
    ...operations,
    operationId: 'healthz',
    summary: 'Liveness: 200 while the process is up.',
    security: PUBLIC,
    responses: { 200: json('Up: data.status `up`.') },
  });
  get('/readyz', {
    ...operations,
    operationId: 'readyz',
    summary: 'Readiness: 200 when the store answers, 503 (reason store_unavailable) otherwise.',
    description:
      'To an operator (x-internal-key, or in the sandbox) the 200 also lists in data.unsafe the defences this instance runs without and in data.warnings the configuration warnings; to anyone else data.status only.',
    security: [{}, { internalKey: [] }],
    responses: {
      200: json('Ready: data.status `ready` (and, to an operator, data.unsafe and data.warnings).'),
      503: {
        description: 'store_unavailable: the code store is unreachable; ask again after Retry-After seconds.',
        headers: z.object({ 'Retry-After': retryAfter }),
        content: { 'application/json': { schema: failure } },
      },
      ...failures([429], ''),
    },
  });
  get('/metrics', {
    ...operations,
    operationId: 'metrics',
    summary: 'Prometheus metrics (docs/operations.md lists them).',
    security: [{ metricsToken: [] }],
    responses: {
      200: {
        description:
          'Prometheus text exposition format 0.0.4; OpenMetrics (with exemplars) to a scrape that accepts application/openmetrics-text.',
        content: { 'text/plain': { schema: z.string() }, 'application/openmetrics-text': { schema: z.string() } },
      },
      401: {
        description:
          'unauthorized: metrics.token is set and `Authorization: Bearer <metrics.token>` is missing or wrong (with WWW-Authenticate: Bearer).',
        headers: z.object({ 'WWW-Authenticate': z.literal('Bearer') }),
        content: { 'application/json': { schema: failure } },
      },
      404: {
        description:
          'metrics_not_enabled: metrics.token is not set, so this port serves no metrics (data.keys names the keys that do: metrics.token here, or metrics.port for a listener of their own).',
        content: { 'application/json': { schema: failure } },
      },
      ...failures([429], ''),
    },
  });
  get('/openapi.json', {
    ...operations,
    operationId: 'openapi',
    summary: 'This document.',
    security: PUBLIC,
    responses: {
      200: {
        description: 'OpenAPI 3.1 document.',
        content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
      },
    },
  });

  // ---- the funnel and the journeys' pages ----
  const product = { tags: ['Product'] };
  const funnelQuery = z.object({
    journey: z.enum(JOURNEY_IDS).optional().describe('One journey; all of them when absent.'),
    since: z
      .string()
      .regex(/^\d{1,4}[mhd]$/)
      .optional()
      .describe('The range ending now: minutes, hours or days (`90m`, `24h`, `7d`); 24h by default.'),
    from: z.string().optional().describe('Start of the range: ISO 8601 with offset, or epoch milliseconds.'),
    to: z.string().optional().describe('End of the range (default now), as `from`.'),
    compare: z.literal('previous').optional().describe('Also the range of the same length just before.'),
    compare_from: z.string().optional().describe('Start of a second range to compare with, as `from`.'),
    compare_to: z.string().optional().describe('End of the second range, as `from`.'),
  });
  const funnelFailures = failures([401, 429], '');
  get('/flows/stats', {
    ...product,
    operationId: 'flows_stats',
    summary: "The funnel's figures: requests, answers and conversion by journey and step (docs/funnel.md).",
    description:
      'With funnel.enabled. A reader holds x-internal-key or x-funnel-key; in the sandbox anyone reads. A query that does not parse, or a range over 30 days, is answered invalid_request (HTTP 200).',
    security: FUNNEL_READER,
    request: { query: funnelQuery },
    responses: { 200: json('The figures (data), or invalid_request.'), ...funnelFailures },
  });
  get('/flows/funnel', {
    ...product,
    operationId: 'flows_funnel',
    summary: 'The funnel as a page: the same figures as /flows/stats, for people.',
    security: FUNNEL_READER,
    request: { query: funnelQuery },
    responses: { 200: text('text/html', 'The page.'), ...funnelFailures },
  });
  get('/flows', {
    ...product,
    operationId: 'flows',
    summary: "The journeys' diagrams with their examples (and, to a funnel reader, its figures drawn on them).",
    description:
      'Served with the demo (demo.enabled or the sandbox) to anyone; without the demo, only to a funnel reader (404 unknown_action to anyone else).',
    security: [{}, ...FUNNEL_READER],
    responses: { 200: text('text/html', 'The page.'), ...failures([404, 429], '') },
  });
  get('/flows/{asset}', {
    ...product,
    operationId: 'flows_asset',
    summary: "The pages' styles and each journey's diagram.",
    description: 'As /flows: with the demo to anyone, without it to a funnel reader (funnel.css: to anyone).',
    security: [{}, ...FUNNEL_READER],
    request: {
      params: z.object({
        asset: z.enum(['flows.css', 'funnel.css', ...JOURNEY_IDS.map((id) => `${id}.svg`)]),
      }),
    },
    responses: {
      200: {
        description: 'The asset.',
        content: { 'text/css': { schema: z.string() }, 'image/svg+xml': { schema: z.string() } },
      },
      ...failures([404, 429], ''),
    },
  });
  get('/demo', {
    ...product,
    operationId: 'demo',
    summary: 'The demo page: every journey driven by the typed client against this service.',
    description: 'With demo.enabled or the sandbox; 404 unknown_action otherwise.',
    security: PUBLIC,
    responses: { 200: text('text/html', 'The page.'), ...failures([404], '') },
  });
  const script = { 200: text('text/javascript', 'The module.'), ...failures([404], '') };
  get('/demo/{asset}', {
    ...product,
    operationId: 'demo_asset',
    summary: "The demo's script, styles and setup.",
    description: 'As /demo.',
    security: PUBLIC,
    request: { params: z.object({ asset: z.enum(['demo.js', 'demo.css', 'setup.json']) }) },
    responses: {
      200: {
        description: 'The asset.',
        content: {
          'text/javascript': { schema: z.string() },
          'text/css': { schema: z.string() },
          'application/json': { schema: z.record(z.string(), z.unknown()) },
        },
      },
      ...failures([404], ''),
    },
  });
  get('/demo/client/{module}', {
    ...product,
    operationId: 'demo_client',
    summary: 'The typed client (client/), as the demo loads it: one ES module per file.',
    security: PUBLIC,
    request: { params: z.object({ module: z.string().regex(/^\w+\.js$/) }) },
    responses: script,
  });
  get('/demo/simplewebauthn/{module}', {
    ...product,
    operationId: 'demo_webauthn',
    summary: "@simplewebauthn/browser's ES modules, as the package ships them, for the demo's passkeys.",
    security: PUBLIC,
    request: { params: z.object({ module: z.string().regex(/^\w+\.js$/) }) },
    responses: script,
  });
  get('/demo/simplewebauthn/{folder}/{module}', {
    ...product,
    operationId: 'demo_webauthn_part',
    summary: 'As /demo/simplewebauthn/{module}: the modules it imports, in the folders the package ships.',
    security: PUBLIC,
    request: {
      params: z.object({ folder: z.enum(['helpers', 'methods', 'types']), module: z.string().regex(/^\w+\.js$/) }),
    },
    responses: script,
  });
  get('/demo/altcha/{file}', {
    ...product,
    operationId: 'demo_altcha',
    summary: "ALTCHA's widget, its styles and its language, for the demo's proof-of-work challenge.",
    security: PUBLIC,
    request: { params: z.object({ file: z.string().regex(/^[\w-]+\.(js|css)$/) }) },
    responses: {
      200: {
        description: 'The file.',
        content: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } },
      },
      ...failures([404], ''),
    },
  });
  get(
    '/',
    {
      ...product,
      operationId: 'root',
      summary: 'In the sandbox, a browser on the root is sent to the demo.',
      security: PUBLIC,
      responses: {
        302: { description: 'To /demo.', headers: z.object({ Location: z.literal('/demo') }) },
      },
    },
    true,
    'GET, HEAD, POST',
  );

  // ---- SMS: the operator's view, a block lifted, the providers' receipts ----
  const sms = { tags: ['SMS'] };
  const sinceQuery = z.object({
    since: z.string().regex(/^\d+$/).optional().describe('Seconds back from now (at most a year); 86400 by default.'),
  });
  get('/sms', {
    ...sms,
    operationId: 'sms_page',
    summary:
      "The SMS operator's page: sends, deliveries and conversion by country, provider and channel, blocks, circuits, the newest entries (masked).",
    security: OPERATOR,
    request: { query: sinceQuery },
    responses: { 200: text('text/html', 'The page.'), ...failures([401, 429], '') },
  });
  get('/_sms/ledger', {
    ...sms,
    operationId: 'sms_ledger',
    summary: 'The same as JSON: totals, by channel, not sent, blocks, challenges, breakers, newest entries.',
    security: OPERATOR,
    request: { query: sinceQuery },
    responses: { 200: json('The ledger (data).'), ...failures([401, 429], '') },
  });
  registry.registerPath({
    method: 'post',
    path: '/_sms/blocks/lift',
    ...sms,
    operationId: 'sms_block_lift',
    summary: 'Lifts a pumping block before its cool-down ends.',
    security: OPERATOR,
    request: {
      body: {
        required: true,
        content: {
          'application/json': {
            schema: z.strictObject({
              range: z
                .string()
                .regex(/^\d{3,12}$/)
                .describe('The digits of a blocked range.'),
            }),
          },
        },
      },
    },
    responses: {
      200: json('data.range and data.lifted (whether a block was lifted); or invalid_request.'),
      ...failures([400, 401, 405, 413, 415, 429, 500], 'POST'),
    },
  });
  const provider = z.object({ provider: z.string().describe("The provider's name in sms.providers.") });
  registry.registerPath({
    method: 'post',
    path: `${RECEIPT_PATH}{provider}`,
    ...sms,
    operationId: 'sms_receipt',
    summary: "A provider's delivery receipt, authenticated by its signature.",
    description:
      'Twilio posts a form per message (to the StatusCallback it was given, `?m=` naming our entry), signed in X-Twilio-Signature; a whatsapp_cloud provider posts JSON to its one webhook, signed in X-Hub-Signature-256. 403 when the signature does not hold; 404 for a name that is no provider.',
    security: [{ twilioSignature: [] }, { metaSignature: [] }],
    request: {
      params: provider,
      query: z.object({
        m: z.string().optional().describe('Our ledger entry, in the callback URL we gave the provider.'),
      }),
      body: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': { schema: z.record(z.string(), z.string()) },
          'application/json': { schema: z.record(z.string(), z.unknown()) },
        },
      },
    },
    responses: {
      204: { description: 'Taken.' },
      403: { description: 'The signature does not hold.', content: { 'application/json': { schema: failure } } },
      ...failures([404, 405, 413, 415, 500], 'GET, POST'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: `${RECEIPT_PATH}{provider}`,
    ...sms,
    operationId: 'sms_receipt_handshake',
    summary: "Meta's webhook handshake: hub.challenge echoed when hub.verify_token is the provider's.",
    security: [{ metaVerifyToken: [] }],
    request: {
      params: provider,
      query: z.object({
        'hub.mode': z.literal('subscribe').optional(),
        'hub.challenge': z.string().optional(),
      }),
    },
    responses: {
      200: text('text/plain', 'The challenge, as sent.'),
      403: {
        description: "The verify token is not the provider's.",
        content: { 'application/json': { schema: failure } },
      },
      ...failures([404, 405, 500], 'GET, POST'),
    },
  });

  // ---- the sandbox's routes ----
  const sandbox = { tags: ['Sandbox'] };
  registry.registerPath({
    method: 'post',
    path: '/_sandbox/reset',
    ...sandbox,
    operationId: 'sandbox_reset',
    summary: 'Forgets codes, cooldowns, limits, the SMS ledger and the outbox (sandbox only).',
    description: "A form post (the outbox page's button) is answered 303 to the outbox page.",
    security: PUBLIC,
    'x-sandbox-only': true,
    responses: {
      200: json('data.cleared names what was forgotten.'),
      303: { description: 'After a form post: to /_sandbox/outbox.html.' },
      ...failures([405], 'POST'),
    },
  });
  get(
    '/_sandbox/outbox',
    {
      ...sandbox,
      operationId: 'sandbox_outbox',
      summary: "What the sandbox's SMS gateway and SMTP server received (sandbox only).",
      security: PUBLIC,
      request: {
        query: z.object({
          to: z.string().optional().describe("One recipient's messages, the newest code at data.code."),
        }),
      },
      responses: { 200: json('data.messages (and with `to`: data.to, data.code).') },
    },
    true,
  );
  get(
    '/_sandbox/outbox.html',
    {
      ...sandbox,
      operationId: 'sandbox_outbox_page',
      summary: 'The newest code per recipient, as a page (sandbox only).',
      security: PUBLIC,
      responses: { 200: text('text/html', 'The page.') },
    },
    true,
  );
  const journeysGuard = {
    description:
      'The recorded login journeys: in the sandbox, or with `debug` on (then only to x-internal-key: proof_required otherwise).',
    security: [{}, { internalKey: [] }] as Security,
  };
  get(
    '/_sandbox/journeys',
    {
      ...sandbox,
      ...journeysGuard,
      operationId: 'sandbox_journeys',
      summary: 'The recorded login journeys.',
      request: {
        query: z.object({ about: z.string().optional().describe('Only those that named this phone, email or uid.') }),
      },
      responses: { 200: json('data.journeys, or proof_required.'), ...failures([429], '') },
    },
    true,
  );
  get(
    '/_sandbox/journeys/{id}',
    {
      ...sandbox,
      ...journeysGuard,
      operationId: 'sandbox_journey',
      summary: 'One recorded journey.',
      request: { params: z.object({ id: z.string() }) },
      responses: { 200: json('The journey (data), or proof_required.'), ...failures([404, 429], '') },
    },
    true,
  );
}
