import {
  actionsInto,
  journeyDiagrams,
  renderJourneyMermaid,
  type JourneyDiagram,
} from '../../machines/diagrams/journey-diagrams';
import { EXAMPLE_JOURNEY_IDS, JOURNEY_IDS } from '../../machines/diagrams/journeys';
import { failureError } from '../../src/flows/answer';
import type { JourneyExample } from '../../src/http/demo/flow-examples';
import type { DocGenerator } from './generator';
import { journeyExamplesOnce } from './journey-examples';
import { renderMermaidSvgs } from './mermaid-svg';

/*
 * docs/journeys.md and docs/journeys/<id>.svg: one diagram per journey for product and QA,
 * generated from the login machine (machines/diagrams/journey-diagrams.ts replays each journey of
 * machines/diagrams/journeys.ts and keeps only the screens, the user's actions and the upstream calls,
 * in the words of machines/diagrams/labels.ts). The refusal texts are the API's own (failureError, the
 * envelope of a refused Fe* request). The SVGs are rendered by Mermaid in Chromium, one browser
 * for all of them. Never edited by hand.
 */

const code = (text: string | number) => `\`${text}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|');
const mermaid = (text: string) => ['```mermaid', text, '```'].join('\n');
const svgPath = (id: string) => `docs/journeys/${id}.svg`;

let diagrams: Promise<JourneyDiagram[]> | undefined;
/** The journeys' diagrams, replayed once per process. */
const journeyDiagramsOnce = () => (diagrams ??= journeyDiagrams());

/** The text a refused request answers (`error` of the envelope). */
const refusalText = (reason: string, field?: string) =>
  failureError({
    reason: reason as Parameters<typeof failureError>[0]['reason'],
    ...(field ? { data: { field } } : {}),
  }).message;

function stepRows(diagram: JourneyDiagram): string {
  const rows = diagram.screens.map((screen) => {
    const into = actionsInto(diagram, screen.state);
    const reached = into.length ? into.map((a) => `«${a.label}» (${a.action})`).join('; ') : 'start';
    const shows = screen.screen ? `${code(screen.screen)}: ${screen.shows}` : screen.shows;
    return `| ${screen.step ?? '–'} | ${cell(screen.name)} | ${cell(shows)} | ${cell(reached)} |`;
  });
  return ['| Step | Screen | What the frontend shows | Reached by |', '|---|---|---|---|', ...rows].join('\n');
}

function refusalRows(diagram: JourneyDiagram): string {
  const title = (state: string) => diagram.screens.find((s) => s.state === state)?.title ?? state;
  const rows = diagram.refusals.map(
    (r) =>
      `| ${cell(title(r.at))} | ${r.action} | ${cell(r.mistake)} | ${cell(refusalText(r.reason, r.field))} | ${code(r.reason)}${r.field ? ` (${code(r.field)})` : ''} |`,
  );
  return ['| On screen | Request | Mistake | Text shown (`error`) | `reason` |', '|---|---|---|---|---|', ...rows].join(
    '\n',
  );
}

function exampleBlock(diagram: JourneyDiagram, example: JourneyExample | undefined): string {
  if (!example) throw new Error(`journeys: no examples for ${diagram.id}`);
  const { person } = example;
  const identifiers = [code(person.uid), code(person.email), ...person.phones.map(code)].join(', ');
  const json = (value: unknown) => [
    '   ```json',
    ...JSON.stringify(value, null, 2)
      .split('\n')
      .map((l) => `   ${l}`),
    '   ```',
  ];
  const exchanges = example.requests.map((r, i) =>
    [
      `${i + 1}. ${code(`POST /${r.action}`)} → ${r.answer.success ? `step ${String(r.answer.data.next_step)}` : code(String(r.answer.data.reason))}. Request:`,
      '',
      ...json(r.body),
      '',
      '   Answer:',
      '',
      ...json(r.answer),
      '',
    ].join('\n'),
  );
  return [
    `Walked in the sandbox by ${person.name} (${identifiers}): every identifier below is theirs.`,
    'A code is shown by whom it went to (read it in `/_sandbox/outbox`); a proof a request sends, by',
    'the answer that handed it out; a proof or token in an answer, by what it binds. They replay as',
    'written after `POST /_sandbox/reset`.',
    ...(EXAMPLE_JOURNEY_IDS.includes(diagram.id)
      ? []
      : diagram.id === 'passkey-enrol'
        ? [
            '',
            'Except this one: the options `PasskeyEnrolOptions` answers hold a new challenge each time, so they,',
            'their `passkey_proof`, the credential the browser creates and the passkey kept are shown by what they',
            'are ([passkeys.md](passkeys.md)).',
          ]
        : [
            '',
            'Except this one: the person enrolled a passkey first (a code login, `PasskeyEnrolOptions`,',
            '`PasskeyEnrol`), and its `passkey_proof` and assertion are good for one challenge only, so they are',
            'shown by what they are; `PasskeyLoginOptions` gives a new challenge each time ([passkeys.md](passkeys.md)).',
          ]),
    '',
    ...exchanges,
  ]
    .join('\n')
    .trimEnd();
}

function section(diagram: JourneyDiagram, example?: JourneyExample): string {
  return [
    `<a id="${diagram.id}"></a>`,
    '',
    `## ${diagram.title}`,
    '',
    `In the contract: ${diagram.spec}. Replayed as "${diagram.name}" in [flows.md](flows.md#journeys). Rendered: [journeys/${diagram.id}.svg](journeys/${diagram.id}.svg).`,
    '',
    mermaid(renderJourneyMermaid(diagram)),
    '',
    '### Steps',
    '',
    stepRows(diagram),
    '',
    '### Refusals',
    '',
    'The user stays on the screen and sees the text.',
    '',
    refusalRows(diagram),
    '',
    '### Example requests and answers',
    '',
    exampleBlock(diagram, example),
  ].join('\n');
}

async function renderJourneys(): Promise<string> {
  const all = await journeyDiagramsOnce();
  const examples = await journeyExamplesOnce();
  const index = all.map(
    (d) =>
      `| [${d.title}](#${d.id}) | ${d.screens.length} | ${d.actions.length} | [${d.id}.svg](journeys/${d.id}.svg) |`,
  );
  return [
    '# Login journeys',
    '',
    '<!-- Generated by `npm run docs` from machines/ (scripts/docs/journeys.ts). Do not edit by hand. -->',
    '',
    'One diagram per journey, for product and QA: only what the user sees and does. A box is a',
    'screen, with its step number (`next_step`) where it has one; an arrow is what the user does',
    'there (one request); the yellow note on it is what the service calls upstream before the next',
    'screen. Refusals are not drawn: each journey lists them in a table, with the text the API',
    'answers. The diagrams are generated from the login machine by replaying each journey',
    '(machines/diagrams/journeys.ts) and named with the words of machines/diagrams/labels.ts, the same words the',
    'demo page uses; the SVGs are rendered by Mermaid. With the sandbox or `demo.enabled` on, the',
    'service shows them at `GET /flows` with example requests and answers ([demo.md](demo.md)); to',
    'a funnel reader it shows them everywhere, production included, with what people did on each',
    'arrow and screen drawn on them ([funnel.md](funnel.md)).',
    'The engineering diagram of the whole machine, with every state, guard and refusal, is in',
    '[flows.md](flows.md).',
    '',
    "Each journey's example requests and answers below (and on `/flows`) are one person walking it in",
    'the sandbox, recorded by `npm run docs` into [journeys/examples.json](journeys/examples.json):',
    'every phone, email, uid, proof and token of a journey is that one person’s.',
    '',
    'Besides the refusals below, a request that sends a code may be refused as `otp_generate`',
    'refuses (`already_sent` during the resend cooldown, `phone_not_mobile`, ...), and a proof that',
    'is tampered with, expired or already spent is `invalid_proof` before the machine runs',
    '([flows-http.md](flows-http.md)).',
    '',
    '| Journey | Screens | Actions | Diagram |',
    '|---|---|---|---|',
    ...index,
    '',
    ...all.flatMap((d) => [
      section(
        d,
        examples.find((e) => e.id === d.id),
      ),
      '',
    ]),
  ].join('\n');
}

export const journeysDoc: DocGenerator = {
  path: 'docs/journeys.md',
  render: renderJourneys,
};

const SVG_HEADER =
  '<!-- Generated by `npm run docs` from machines/ (scripts/docs/journeys.ts): the Mermaid source is in docs/journeys.md. Do not edit by hand. -->\n';

let svgs: Promise<Map<string, string>> | undefined;
/** Every journey's SVG, rendered once per process in one browser. */
async function journeySvgsOnce(): Promise<Map<string, string>> {
  svgs ??= journeyDiagramsOnce().then((all) =>
    renderMermaidSvgs(all.map((d) => ({ id: `journey-${d.id}`, source: renderJourneyMermaid(d) }))),
  );
  return svgs;
}

/** docs/journeys/<id>.svg, one generator per journey; the first to render starts the browser for all. */
export const journeySvgDocs: DocGenerator[] = JOURNEY_IDS.map((id) => ({
  path: svgPath(id),
  render: async () => {
    const svg = (await journeySvgsOnce()).get(`journey-${id}`);
    if (svg === undefined) throw new Error(`journeys: no diagram for ${id}`);
    return SVG_HEADER + svg;
  },
}));
