import { CODE_PLACEHOLDER, PROOF_REFERENCE, type ExampleExchange, type JourneyExample } from './demo/flow-examples';

/*
 * The document's `links` (OpenAPI 3.1, Link Object): from each Fe* answer to the request it
 * leads to, with what the next request carries from it. Read off the journeys one person walks
 * in the sandbox (docs/journeys/examples.json, recorded by `npm run docs` from the machine's
 * journeys), not written per operation: a field of the next request is carried from the answer
 * (`$response.body#/data/...`) or from the request that got it (`$request.body#/...`) when its
 * value came from there, a proof when it is the one that answer handed out. What a person types
 * (the code, a name) is listed in `x-person-input`, and a choice among the field's enum values
 * that nothing carries (FeRegister's `phase`) is written as the literal the journey sends.
 */

/** A Link Object with the two extensions a tool needs to choose a link and fill what a person types. */
export interface JourneyLink {
  operationId: string;
  description: string;
  requestBody: Record<string, unknown>;
  /** The answer's `data.next_step` this link follows from. */
  'x-next-step': number | string;
  /** The fields of the next request that a person types (the code from the message, a name...). */
  'x-person-input': string[];
}

/** The enum values of each request field, by action: a field with a few allowed values is a choice, not input. */
export type RequestEnums = (action: string, field: string) => readonly unknown[] | undefined;

const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The JSON pointer of the first string in `node` equal to `value`, the key named `prefer` first. */
function pathOf(node: unknown, value: string, prefer: string, at = ''): string | undefined {
  if (typeof node !== 'object' || node === null) return node === value ? at : undefined;
  const entries = Object.entries(node);
  const ordered = [...entries.filter(([k]) => k === prefer), ...entries.filter(([k]) => k !== prefer)];
  for (const [key, child] of ordered) {
    const found = pathOf(child, value, prefer, `${at}/${escape(key)}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Where the next request's `key: value` comes from, seen from the exchange before it (`answer`: its 1-based number). */
function sourceOf(
  key: string,
  value: unknown,
  before: ExampleExchange,
  answer: number,
  enumOf: (field: string) => readonly unknown[] | undefined,
): { expression: unknown } | 'input' {
  if (typeof value === 'string') {
    if (CODE_PLACEHOLDER.test(value)) return 'input';
    const proof = PROOF_REFERENCE.exec(value);
    if (proof) {
      if (Number(proof[2]) === answer) return { expression: `$response.body#/data/${escape(proof[1]!)}` };
      const carried = pathOf(before.body, value, key);
      return carried ? { expression: `$request.body#${carried}` } : 'input';
    }
    const fromAnswer = pathOf(before.answer.data, value, key);
    if (fromAnswer) return { expression: `$response.body#/data${fromAnswer}` };
    const fromRequest = pathOf(before.body, value, key);
    if (fromRequest) return { expression: `$request.body#${fromRequest}` };
  }
  if (enumOf(key)?.includes(value)) return { expression: value };
  return 'input';
}

/** The link from `before`'s answer to `next`. */
function linkOf(before: ExampleExchange, next: ExampleExchange, answer: number, enums: RequestEnums): JourneyLink {
  const requestBody: Record<string, unknown> = {};
  const input: string[] = [];
  for (const [key, value] of Object.entries(next.body)) {
    const source = sourceOf(key, value, before, answer, (field) => enums(next.action, field));
    if (source === 'input') input.push(key);
    else requestBody[key] = source.expression;
  }
  return described({
    operationId: next.action,
    description: '',
    requestBody,
    'x-next-step': before.answer.data.next_step as number | string,
    'x-person-input': input,
  });
}

const quoted = (keys: readonly string[]) => keys.map((key) => `\`${key}\``).join(', ');

function described(link: JourneyLink): JourneyLink {
  const carried = Object.keys(link.requestBody);
  const input = link['x-person-input'];
  link.description = `When data.next_step is ${link['x-next-step']}: ${link.operationId}, carrying ${carried.length ? quoted(carried) : 'nothing'}${input.length ? `; the person gives ${quoted(input)}` : ''}.`;
  return link;
}

/** A link's name: the next action, the step it follows, and the choice it makes when it writes one. */
function nameOf(link: JourneyLink, next: ExampleExchange): string {
  const choices = Object.entries(link.requestBody)
    .filter(([, expression]) => typeof expression !== 'string' || !expression.startsWith('$'))
    .filter(([key]) => next.body[key] !== undefined)
    .map(([, expression]) => String(expression));
  return [link.operationId, 'at', String(link['x-next-step']), ...choices].join('_');
}

/**
 * The links of each operation's 200 answer, by operationId: every pair of consecutive requests of
 * every journey, the same link met twice kept once. Two journeys that carry different fields
 * along the same edge (a phone in one, an email in the other) are told apart by their step.
 */
export function journeyLinks(
  journeys: readonly JourneyExample[],
  enums: RequestEnums,
): Map<string, Record<string, JourneyLink>> {
  const links = new Map<string, Record<string, JourneyLink>>();
  for (const journey of journeys) {
    journey.requests.forEach((next, index) => {
      const before = journey.requests[index - 1];
      // An answer that names no step (a passkey enrolment's, which answers its ceremony) has no step to link from.
      if (!before?.answer.success || before.answer.data.next_step === undefined) return;
      const link = linkOf(before, next, index, enums);
      const name = nameOf(link, next);
      const own = links.get(before.action) ?? {};
      const known = own[name];
      if (known) {
        // Met again: only what both walks carry the same way is carried; the rest a person gives.
        const fields = new Set([
          ...Object.keys(known.requestBody),
          ...Object.keys(link.requestBody),
          ...known['x-person-input'],
          ...link['x-person-input'],
        ]);
        for (const key of Object.keys(known.requestBody))
          if (known.requestBody[key] !== link.requestBody[key]) delete known.requestBody[key];
        known['x-person-input'] = [...fields].filter((key) => !(key in known.requestBody));
        described(known);
      } else own[name] = link;
      links.set(before.action, own);
    });
  }
  return links;
}
