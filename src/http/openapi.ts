import { z } from 'zod';
import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { actions as registeredActions } from '../actions';
import { reasons, statusOf, type Reason } from '../core/errors';
import type { Action } from '../actions/action';
import { contentActions } from '../actions/content';
import { debugActions } from '../actions/debug';
import { flowsActions } from '../actions/flows';
import { passkeysActions } from '../actions/passkeys';
import { identityActions } from '../actions/identity';
import { otpActions } from '../actions/otp';
import { PHONE_PATTERN } from '../core/phone-pattern';
import { journeyExamples, type JourneyExample } from './demo/flow-examples';
import { journeyLinks } from './openapi-links';
import { registerOperatorPaths, SECURITY_SCHEMES } from './openapi-operations';

/*
 * The OpenAPI 3.1 description, generated from the action registry: each action's zod request
 * schema, its `response` (the shape of `data`) and its `reasons`. Nothing here is a copy of a
 * request or response shape; the envelope is the one of src/http/envelope.ts.
 *
 * docs/contract.md#addressing-and-envelope, 1: `POST /?action=<name>` and `POST /<name>` are the same call. Every
 * action has its own `/<name>` path (what Swagger UI renders best); the query style is one `/`
 * operation with a required `action` parameter listing every action, and each `/<name>`
 * operation names its query form in `x-action-query`.
 */

extendZodWithOpenApi(z);

const OPENAPI_VERSION = '3.1.0';
/** docs/contract.md#versioning: the interface description carries version 1.0.0. */
const API_VERSION = '1.0.0';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/** Reasons every action may answer besides its own (Action.reasons). */
export const COMMON_REASONS = ['invalid_request', 'upstream_error'] as const;

/**
 * What any action's address may answer before or around the action (src/http/app.ts): each is
 * listed under its catalogue status on every action operation, with the action's own reasons
 * whose status is not 200 (store_unavailable: 503). The statuses come from src/core/errors.ts.
 */
const TRANSPORT_REASONS = [
  'malformed_json',
  'unknown_action',
  'method_not_allowed',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal_error',
] as const satisfies readonly Reason[];

/** What each status of a transport answer means, and the headers it carries. */
const STATUS_TEXTS: Readonly<Record<number, string>> = {
  400: 'malformed_json: the body is not JSON, or it holds a key `__proto__` anywhere (valid JSON, refused by the parser because reading it would set an object prototype; data.issues names it).',
  404: 'unknown_action: no action by that name (data.action; data.did_you_mean names the nearest known action when the name looks like a typo of one).',
  405: 'method_not_allowed: an action takes POST only (Allow: POST).',
  413: 'payload_too_large: the body is over server.body_limit.',
  415: 'unsupported_media_type: a body that is not application/json or application/*+json, or an unknown Content-Encoding.',
  429: 'rate_limited: a limit refused the request (data.limit names it; Retry-After and data.retry_after say when to retry).',
  500: 'internal_error: an unexpected failure (data.request_id, the x-request-id header; never a stack).',
  503: 'store_unavailable: the code store cannot be reached; retry after Retry-After seconds.',
};
const retryAfter = z.string().regex(/^\d+$/).describe('Seconds to wait before retrying.');
const STATUS_HEADERS: Readonly<Record<number, z.ZodObject>> = {
  405: z.object({ Allow: z.literal('POST').describe('The methods the resource takes.') }),
  429: z.object({ 'Retry-After': retryAfter }),
  503: z.object({ 'Retry-After': retryAfter }),
};

/** The reasons an action answers, by the catalogue's status of each: 200 holds the business outcomes. */
function reasonsByStatus(action: Action): Map<number, Reason[]> {
  const all = [...new Set<Reason>([...(action.reasons ?? []), ...COMMON_REASONS, ...TRANSPORT_REASONS])].sort();
  const byStatus = new Map<number, Reason[]>();
  for (const reason of all) byStatus.set(statusOf(reason), [...(byStatus.get(statusOf(reason)) ?? []), reason]);
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

const groups: ReadonlyArray<readonly [string, readonly Action[]]> = [
  ['OTP', otpActions],
  ['Identity', identityActions],
  ['Login flows', flowsActions],
  ['Passkeys', passkeysActions],
  ['Newsletter and recommendations', contentActions],
  ['Debug', debugActions],
];
const tagOf = (name: string): string => groups.find(([, list]) => list.some((a) => a.name === name))?.[0] ?? 'Other';

const looseRecord = () => z.record(z.string(), z.unknown());

const issues = z
  .array(
    z.object({ path: z.string().describe('Dotted path of the field, empty for the whole body.'), message: z.string() }),
  )
  .describe('Present with reason invalid_request: what was wrong with each field.');

const extras = {
  meta: looseRecord().optional().describe('Present on search_user, get_user and get_user_email.'),
  payload: looseRecord()
    .optional()
    .describe('Present on update_profile (echo of the sent fields) and on debug actions (token masked).'),
  idp_debug: looseRecord().optional().describe('Only when the configuration key `debug` is true.'),
  debug: z
    .array(z.looseObject({ step: z.string() }))
    .optional()
    .describe(
      'Internal call trace of optimised actions, only when `debug` is true; holds a step named login_ingestion when ingest ran.',
    ),
};

const successEnvelope = (data: z.ZodType) =>
  z.object({ success: z.literal(true), error: z.null().describe('Always null on success.'), data, ...extras });

/**
 * What the failures answered before any action ran add to `data` (src/http/app.ts,
 * src/http/front-controller.ts, src/domain/limits/abuse-limits.ts): listed, so a client can
 * read them from the document rather than from prose.
 */
const transportData = {
  action: z
    .string()
    .nullable()
    .optional()
    .describe(
      'With unknown_action from the front controller: the name asked for (at most 64 characters), null when none was given.',
    ),
  did_you_mean: z
    .string()
    .optional()
    .describe(
      'With unknown_action: the known action the name most likely meant (`felogin` -> `FeLogin`), when it is near enough to be a typo.',
    ),
  retry_after: z
    .number()
    .int()
    .optional()
    .describe('With rate_limited: seconds to wait, as in the Retry-After header.'),
  limit: z.string().optional().describe('With rate_limited: the name of the limit that refused the request.'),
  request_id: z
    .string()
    .optional()
    .describe('With internal_error: the id of the request in the log (also the x-request-id header).'),
  keys: z
    .array(z.string())
    .optional()
    .describe('With metrics_not_enabled: the configuration keys that serve the metrics.'),
};

/**
 * What `challenge_required` adds to `data` (src/domain/limits/challenge.ts): the bot challenge to
 * solve, and after a refused solution why it was refused. The request is repeated with its
 * `challenge` field set to the solution (docs/flows-http.md, "Bot challenge").
 */
const challengeData = {
  challenge: z
    .union([
      z
        .object({
          provider: z.literal('pow'),
          parameters: z
            .looseObject({
              algorithm: z.string(),
              nonce: z.string(),
              salt: z.string(),
              cost: z.number(),
              keyLength: z.number(),
              keyPrefix: z.string(),
              keySignature: z.string().optional(),
              expiresAt: z.number().optional().describe('Seconds since the epoch.'),
              data: z
                .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
                .optional()
                .describe('The action and a digest of the identifier the challenge is bound to.'),
            })
            .describe("ALTCHA's challenge parameters (protocol v2), signed."),
          signature: z.string(),
        })
        .describe(
          "A proof of work to solve with ALTCHA's widget (or its library): the solution is the widget's payload.",
        ),
      z
        .object({
          provider: z.enum(['turnstile', 'hcaptcha']),
          site_key: z.string(),
          action: z.string().describe('Turnstile: render the widget with this action.'),
          cdata: z.string().optional().describe('Turnstile: render the widget with this customer data.'),
        })
        .describe("A hosted challenge: render the provider's widget with the site key; the solution is its token."),
    ])
    .openapi('Challenge')
    .optional()
    .describe('With challenge_required: what to solve before repeating the request with `challenge`.'),
  solution: z
    .enum(['malformed', 'invalid', 'expired', 'spent', 'mismatch', 'unverified'])
    .optional()
    .describe(
      'With challenge_required after a solution was given: why it was refused (spent: used already; mismatch: issued for another action or identifier; unverified: the provider could not be asked).',
    ),
};

const failureEnvelope = (reason: z.ZodType, data: z.ZodRawShape = {}) =>
  z.object({
    success: z.literal(false),
    error: z
      .string()
      .describe(
        "Human-readable message, ready to show, in the request's language: English when the locale (the `locale` field where the action has one, else Accept-Language) is `en`, Italian (the contract's texts) otherwise; `data.issues[].message` follows the same rule.",
      ),
    data: z
      .looseObject({ reason, issues: issues.optional(), ...data })
      .describe('`reason` plus reason-specific fields (retry_after, valid, blocked, ...).'),
  });

/**
 * Registers `schema` as component `refId` and returns what to embed to refer to it. Schemas
 * zod-to-openapi cannot describe (z.custom, z.instanceof, ...) get zod's own JSON Schema
 * instead, so one odd action never breaks the document: a placeholder object is registered
 * (it embeds as a plain $ref) and `fallbacks` replaces it once the document is generated.
 */
function component(
  registry: OpenAPIRegistry,
  fallbacks: Map<string, object>,
  refId: string,
  schema: z.ZodType,
  io: 'input' | 'output',
): z.ZodType {
  // Schemas built before extendZodWithOpenApi ran lack `.openapi`; a clone has it.
  const named = schema.clone().openapi(refId);
  try {
    const probe = new OpenAPIRegistry();
    probe.register(refId, named);
    new OpenApiGeneratorV31(probe.definitions).generateComponents();
    return registry.register(refId, named);
  } catch {
    fallbacks.set(refId, jsonSchemaOf(schema, io));
    return registry.register(refId, z.looseObject({}));
  }
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  try {
    const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
    }) as Record<string, unknown>;
    return json;
  } catch {
    return { description: 'Shape not describable.' };
  }
}

function registerAction(
  registry: OpenAPIRegistry,
  fallbacks: Map<string, object>,
  action: Action,
  transport: TransportFailures,
) {
  const { name } = action;
  const request = component(registry, fallbacks, `${name}.Request`, action.request, 'input');
  const data = action.response
    ? component(registry, fallbacks, `${name}.Data`, action.response, 'output')
    : looseRecord().nullable();
  const byStatus = reasonsByStatus(action);
  const reasons = byStatus.get(200) ?? [];
  const success = registry.register(`${name}.Success`, successEnvelope(data));
  const failure = registry.register(
    `${name}.Failure`,
    failureEnvelope(
      z.enum(reasons as [string, ...string[]]).describe('Stable snake_case code of the outcome.'),
      reasons.includes('challenge_required') ? challengeData : {},
    ),
  );
  const body = action.bodyResponse
    ? component(registry, fallbacks, `${name}.Body`, action.bodyResponse, 'output')
    : undefined;
  registry.registerPath({
    method: 'post',
    path: `/${name}`,
    operationId: name,
    tags: [tagOf(name)],
    summary: action.summary ?? name,
    description: `Also callable as \`POST /?action=${name}\` (the same call; when a path names an action and \`?action=\` names another, the path's action is called and the parameter ignored). Business outcomes answer HTTP 200: \`success: true\` with \`data\`, or \`success: false\` with \`data.reason\` one of ${reasons.map((r) => `\`${r}\``).join(', ')}. Every other status is listed with its reason.${action.rules?.length ? `\n\nRules the schema cannot state (each answered \`invalid_request\` unless it names another reason):\n${action.rules.map((rule) => `- ${rule}`).join('\n')}` : ''}`,
    'x-action-query': `/?action=${name}`,
    request: { body: { required: true, content: { 'application/json': { schema: request } } } },
    responses: {
      200: {
        description: body
          ? 'The envelope: success with the action data, or a business failure with its reason; or the raw body the action answers in place of the envelope.'
          : 'The envelope: success with the action data, or a business failure with its reason.',
        content: {
          'application/json': {
            schema: z
              .union(body ? [success, failure, body] : [success, failure])
              .openapi({}, { unionPreferredType: 'oneOf' }),
          },
        },
      },
      ...transportResponses(
        transport,
        [...byStatus.keys()].filter((status) => status !== 200),
      ),
    },
  });
  return { request, body };
}

/** One failure envelope per transport status, its reason the catalogue's reasons of that status. */
type TransportFailures = ReadonlyMap<number, z.ZodType>;

function registerTransportFailures(registry: OpenAPIRegistry, actions: readonly Action[]): TransportFailures {
  const byStatus = new Map<number, Set<Reason>>();
  for (const action of actions)
    for (const [status, list] of reasonsByStatus(action))
      if (status !== 200) byStatus.set(status, new Set([...(byStatus.get(status) ?? []), ...list]));
  return new Map(
    [...byStatus].map(([status, list]) => [
      status,
      registry.register(
        `Failure.${status}`,
        failureEnvelope(
          z
            .enum([...list].sort() as [Reason, ...Reason[]])
            .describe(`Stable snake_case code: the reasons of HTTP ${status}.`),
          transportData,
        ),
      ),
    ]),
  );
}

function transportResponses(transport: TransportFailures, statuses: readonly number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: STATUS_TEXTS[status] ?? `HTTP ${status}.`,
        ...(STATUS_HEADERS[status] ? { headers: STATUS_HEADERS[status] } : {}),
        content: { 'application/json': { schema: transport.get(status)! } },
      },
    ]),
  );
}

/**
 * The OpenAPI document of `actions` (the registry by default), its links read off `journeys`
 * (the committed journey examples by default). Pure: same actions and journeys, same document.
 */
export function createOpenApiDocument(
  actions: readonly Action[] = registeredActions,
  journeys: readonly JourneyExample[] = [...journeyExamples().values()],
): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES))
    registry.registerComponent('securitySchemes', name, scheme);
  const envelope = registry.register('Envelope', successEnvelope(looseRecord().nullable()).loose());
  // Any reason of the catalogue: the query form's answer is the failure of whichever action it named.
  const anyReason = z
    .enum([...reasons].sort() as [Reason, ...Reason[]])
    .describe('Stable snake_case code of the outcome: any reason of the service.');
  const failure = registry.register('Failure', failureEnvelope(anyReason, transportData));

  const fallbacks = new Map<string, object>();
  const transport = registerTransportFailures(registry, actions);
  const registered = actions.map((action) => registerAction(registry, fallbacks, action, transport));
  const [first, ...rest] = registered.map(({ request }) => request);
  const bodies = registered.flatMap(({ body }) => (body ? [body] : []));
  // The query form answers what the named action answers: any action's business failure on 200.
  const businessReasons = [...new Set(actions.flatMap((action) => reasonsByStatus(action).get(200) ?? []))].sort();
  const businessFailure = registry.register(
    'Failure.200',
    failureEnvelope(
      z.enum(businessReasons as [string, ...string[]]).describe('Stable snake_case code of the outcome.'),
      { ...transportData, ...challengeData },
    ),
  );
  if (first) {
    registry.registerPath({
      method: 'post',
      path: '/',
      operationId: 'action_by_query',
      tags: ['Addressing'],
      summary: 'Any action, named by the query parameter (the same call as POST /<name>).',
      description:
        '`POST /?action=<name>` is the same call as `POST /<name>`: the body, the answer and the reasons are those of the named operation. Only `/` reads the parameter: on `/<name>` the path names the action and `?action=` is ignored.',
      request: {
        query: z.object({
          action: z
            .enum(actions.map((a) => a.name) as [string, ...string[]])
            .openapi({ param: { description: 'The action to call.' } }),
        }),
        body: {
          required: true,
          content: { 'application/json': { schema: rest.length > 0 ? z.union([first, ...rest]) : first } },
        },
      },
      responses: {
        200: {
          description:
            'The envelope of the named action (see its `/<name>` operation), or the raw body of an action that answers one (recommendations).',
          content: {
            'application/json': {
              schema: z.union([envelope, businessFailure, ...bodies]).openapi({}, { unionPreferredType: 'oneOf' }),
            },
          },
        },
        ...transportResponses(transport, [...transport.keys()]),
      },
    });
  }
  registerOperatorPaths(registry, { envelope, failure });

  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Login frontend API',
      version: API_VERSION,
      description:
        'JSON front-controller API for a login and registration frontend: one-time codes, identity provider, optimised login flows, newsletters and recommendations. Every action is `POST /<name>` or, the same call, `POST /?action=<name>`; JSON in, the envelope `{success, error, data, ...}` out.',
    },
    tags: [
      ...groups.map(([name]) => ({ name })),
      { name: 'Addressing', description: 'The query form of every action.' },
      { name: 'Operations', description: 'Health, readiness, metrics, this document.' },
      { name: 'Product', description: "The funnel, the journeys' diagrams and the demo page." },
      { name: 'SMS', description: "The SMS operator's view, block lifting and the providers' delivery receipts." },
      {
        name: 'Sandbox',
        description:
          "Only with sandbox.enabled (x-sandbox-only): the fake upstreams' outbox, a reset, the recorded journeys.",
      },
    ],
    security: [{}, { internalKey: [] }],
  });
  const schemas = document.components?.schemas ?? {};
  for (const [refId, json] of fallbacks) schemas[refId] = json as (typeof schemas)[string];
  // The phone pattern is long (every region's mobile numbers): written once, as component Phone, and referred to.
  if (referPattern(document, PHONE_PATTERN, '#/components/schemas/Phone'))
    schemas.Phone = {
      type: 'string',
      pattern: PHONE_PATTERN,
      description:
        'A mobile number as src/domain/phone.ts parses it: E.164, or national in sms.default_region (IT by default), from the numbering plans of libphonenumber-js.',
    };
  addLinks(document, journeys);
  return document;
}

/** The journeys' links under each Fe* operation's 200 answer, between operations the document has. */
function addLinks(document: OpenApiDocument, journeys: readonly JourneyExample[]): void {
  const schemas = (document.components?.schemas ?? {}) as Record<
    string,
    { properties?: Record<string, { enum?: unknown[] }> }
  >;
  const enums = (action: string, field: string) => schemas[`${action}.Request`]?.properties?.[field]?.enum;
  for (const [from, links] of journeyLinks(journeys, enums)) {
    const answer = document.paths?.[`/${from}`]?.post?.responses?.['200'] as
      { links?: Record<string, unknown> } | undefined;
    const known = Object.entries(links).filter(([, link]) => document.paths?.[`/${link.operationId}`]?.post);
    if (answer && known.length) answer.links = Object.fromEntries(known);
  }
}

/** Replaces `pattern` by a `$ref` wherever a schema of the document states it; whether any did. */
function referPattern(node: unknown, pattern: string, ref: string): boolean {
  if (typeof node !== 'object' || node === null) return false;
  let found = false;
  for (const value of Object.values(node)) found = referPattern(value, pattern, ref) || found;
  const schema = node as Record<string, unknown>;
  if (schema.pattern !== pattern) return found;
  const nullable = Array.isArray(schema.type) && schema.type.includes('null');
  delete schema.pattern;
  delete schema.type;
  if (nullable) schema.anyOf = [{ $ref: ref }, { type: 'null' }];
  else schema.$ref = ref;
  return true;
}
