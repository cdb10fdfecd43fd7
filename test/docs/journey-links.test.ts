import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { EXAMPLE_JOURNEY_IDS } from '../../machines';
import { examplesClient } from '../../scripts/docs/journey-examples';
import {
  CODE_PLACEHOLDER,
  PROOF_REFERENCE,
  journeyExamples,
  type JourneyExample,
} from '../../src/http/demo/flow-examples';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';

/*
 * The journeys walked as a stateful OpenAPI tool walks them (issue 47): from FeLogin, each next
 * request is the one a link of docs/openapi.json names for the answer's `next_step`, its body
 * the link's `requestBody` with the runtime expressions (`$response.body#/data/flow`,
 * `$request.body#/identifier`) read off the exchange before, plus only what the link lists in
 * `x-person-input`: what a person types (the code, read from the sandbox outbox; a name).
 */

type Json = Record<string, unknown>;
interface Link {
  operationId: string;
  requestBody: Json;
  'x-next-step': number | string;
  'x-person-input': string[];
}

const DOCUMENT = JSON.parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8')) as {
  paths: Record<string, { post?: { responses: Record<string, { links?: Record<string, Link> }> } }>;
};

const linksOf = (operation: string): Link[] =>
  Object.values(DOCUMENT.paths[`/${operation}`]?.post?.responses['200']?.links ?? {});

/** A JSON pointer's value in `node` (RFC 6901). */
const at = (node: unknown, pointer: string): unknown =>
  pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((value, key) => (value as Json | undefined)?.[key], node);

/** A link's value: a runtime expression read off the exchange before, or the literal it is. */
function evaluate(expression: unknown, request: Json, response: Json): unknown {
  if (typeof expression !== 'string') return expression;
  const match = /^\$(request|response)\.body#(\/.*)?$/.exec(expression);
  if (!match) return expression;
  return at(match[1] === 'request' ? request : response, match[2] ?? '');
}

/** The body a link builds, without what the person types. */
const carried = (link: Link, request: Json, response: Json): Json =>
  Object.fromEntries(
    Object.entries(link.requestBody)
      .map(([key, expression]) => [key, evaluate(expression, request, response)] as const)
      .filter(([, value]) => value !== undefined),
  );

describe("journeys walked by docs/openapi.json's links", () => {
  let service: Service;
  let client: ReturnType<typeof examplesClient>;

  beforeAll(async () => {
    const silent = pino({ level: 'silent' });
    service = await startService(testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port: 0 } }), {
      log: silent,
      otpLog: silent,
    });
    client = examplesClient(service.url);
  });
  afterAll(() => service?.close());

  it('links every Fe* answer that leads on to the operations it leads to', () => {
    const from = Object.entries(DOCUMENT.paths)
      .filter(([, item]) => Object.keys(item.post?.responses['200']?.links ?? {}).length > 0)
      .map(([path]) => path);
    expect(from.sort()).toEqual(['/FeAddPhone', '/FeLogin', '/FeRegister', '/FeVerifyOtp']);
    for (const path of from)
      for (const link of linksOf(path.slice(1))) expect(DOCUMENT.paths[`/${link.operationId}`]?.post).toBeDefined();
  });

  it('walks a phone login from FeLogin to 90 with the links and the code the person reads', async () => {
    await client.reset();
    const phone = '+393331234567';
    let operation = 'FeLogin';
    let request: Json = { identifier: phone };
    const steps: unknown[] = [];
    for (let hop = 0; hop < 5; hop++) {
      const response = (await client.post(operation, request)) as unknown as Json & { data: Json };
      steps.push(response.data.next_step ?? response.data.reason);
      if (response.data.next_step === 90) break;
      const [link, ...others] = linksOf(operation).filter(
        (l) => String(l['x-next-step']) === String(response.data.next_step),
      );
      expect([link?.operationId, others.length]).toEqual(['FeVerifyOtp', 0]);
      const typed: Json = {};
      for (const field of link!['x-person-input']) {
        expect(field).toBe('otp_code');
        typed[field] = await client.code(phone);
      }
      operation = link!.operationId;
      request = { ...carried(link!, request, response), ...typed };
    }
    expect(steps).toEqual([14, 90]);
  });

  // Every journey of docs/journeys/examples.json, each next request chosen and built from the
  // links; what the person types taken from the example (the code: from the outbox).
  // The examples that replay as written (a passkey's assertion answers one challenge only: EXAMPLE_JOURNEY_IDS).
  it.each(
    [...journeyExamples().values()]
      .filter((journey) => EXAMPLE_JOURNEY_IDS.includes(journey.id))
      .map((journey) => [journey.id, journey] as const),
  )(
    'walks %s with the links, step by step as its example',
    async (_id, journey: JourneyExample) => {
      await client.reset();
      const [first, ...rest] = journey.requests;
      let operation = first!.action as string;
      let request: Json = first!.body;
      let response = (await client.post(operation, request)) as unknown as Json & { data: Json };
      const steps = [response.data.next_step];
      for (const next of rest) {
        // The link that builds the example's request: it names each field sent, and what it carries is what was sent.
        const builds = (link: Link) => {
          const body = carried(link, request, response);
          const named = [...Object.keys(link.requestBody), ...link['x-person-input']];
          return Object.entries(next.body).every(
            ([key, value]) =>
              named.includes(key) &&
              (!(key in body) || body[key] === value || (typeof value === 'string' && PROOF_REFERENCE.test(value))),
          );
        };
        const link = linksOf(operation).find(
          (l) =>
            String(l['x-next-step']) === String(response.data.next_step) && l.operationId === next.action && builds(l),
        );
        expect(link).toBeDefined();
        const typed: Json = {};
        for (const field of link!['x-person-input']) {
          const value = next.body[field];
          const code = typeof value === 'string' ? CODE_PLACEHOLDER.exec(value) : null;
          if (value !== undefined) typed[field] = code ? await client.code(code[1]!) : value;
        }
        operation = link!.operationId;
        request = { ...carried(link!, request, response), ...typed };
        response = (await client.post(operation, request)) as unknown as Json & { data: Json };
        steps.push(response.data.next_step ?? response.data.reason);
      }
      expect(steps).toEqual(journey.requests.map((r) => r.answer.data.next_step));
    },
    30_000,
  );
});
