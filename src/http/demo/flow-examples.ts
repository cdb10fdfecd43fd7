import { existsSync, readFileSync } from 'node:fs';
import type { FeAction, JourneyId } from '../../../machines';
import { shippedPath } from '../../core/paths';

/*
 * The example requests and answers of /flows and docs/journeys.md: one person walking each
 * journey in the sandbox, recorded by `npm run docs` (scripts/docs/journey-examples.ts) into
 * docs/journeys/examples.json, which the build carries. What changes on every run is shown by
 * what it stands for: the code by whom it went to, a proof by the answer that handed it out (in a
 * request) or by the claims it binds (in an answer), a token by its subject.
 */

const EXAMPLES_PATH = shippedPath('docs', 'journeys', 'examples.json');

/** The one person a journey's examples are about: a seeded person, or the one the journey registers. */
export interface ExamplePerson {
  name: string;
  uid: string;
  email: string;
  /** The phones on the account during the journey (the one on file, the one added). */
  phones: string[];
}

export interface ExampleExchange {
  action: FeAction;
  body: Record<string, unknown>;
  answer: { success: boolean; error: string | null; data: Record<string, unknown> };
}

export interface JourneyExample {
  id: JourneyId;
  person: ExamplePerson;
  requests: ExampleExchange[];
}

/** The placeholder of a code: whom it went to, and where the sandbox shows it. */
export const codePlaceholder = (to: string) => `‹il codice inviato a ${to}, in /_sandbox/outbox›`;
export const CODE_PLACEHOLDER = /^‹il codice inviato a (\S+), in \/_sandbox\/outbox›$/;
/** The placeholder of a proof a request sends on: the answer (1-based) that handed it out. */
export const proofReference = (field: string, answer: number) => `‹la ${field} della risposta ${answer}›`;
export const PROOF_REFERENCE = /^‹la (\w+) della risposta (\d+)›$/;

/** The committed examples by journey; empty when `npm run docs` never wrote them. */
export function journeyExamples(path = EXAMPLES_PATH): Map<JourneyId, JourneyExample> {
  if (!existsSync(path)) return new Map();
  const all = JSON.parse(readFileSync(path, 'utf8')) as { journeys: JourneyExample[] };
  return new Map(all.journeys.map((j) => [j.id, j]));
}
