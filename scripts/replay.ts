import { readFileSync } from 'node:fs';
import {
  ACTION_ENTRY,
  EFFECT_NAMES,
  FlowTimeoutError,
  flowRequest,
  provideEffects,
  resumePointFor,
  runStep,
  type FlowEffects,
  type StepId,
} from '../machines';
import {
  MASK,
  RECORDING_FORMAT,
  maskSecrets,
  type RecordedEffect,
  type RecordedJourney,
  type RecordedRequest,
} from '../src/flows/journey-recording';

/*
 * `npm run replay -- <file.json>`: replays a recorded login journey (GET /_sandbox/journeys,
 * src/flows/journey-recorder.ts) against the login machine as it is today, with fake effects
 * that answer what the recording says they answered: no HTTP, no upstream, no proof signing.
 * Prints the path, one line per request (action, state resumed, steps passed, answer step), and
 * exits 1 at the first request where the machine takes another path, naming the request and
 * the step. `replayRecording` is what a jest test calls (docs/flows-http.md).
 */

export interface ReplayedLine {
  n: number;
  action: string;
  /** The state the machine resumed at today; null for a request refused before the machine ran (not replayed). */
  resumed: string | null;
  steps: StepId[];
  answer: { ok: boolean; step: StepId | null; flow: string | null; reason?: string };
  /** Why the request was not replayed (refused before the machine: a bad or spent proof, a bad phone). */
  skipped?: string;
}

export interface Divergence {
  /** The request's `n` in the recording, and its action. */
  request: number;
  action: string;
  /** The step where the paths part: the first step that differs, or the last step both passed. */
  step: StepId | null;
  message: string;
}

export interface ReplayResult {
  journey: string;
  lines: ReplayedLine[];
  /** The first place the machine left the recorded path; absent when it followed it to the end. */
  divergence?: Divergence;
}

/** Thrown by a fake effect the machine calls where the recording has another (or none). */
class ReplayDivergence extends Error {}

const arrow = (steps: readonly StepId[]) => (steps.length ? steps.join(' → ') : '-');
/** The steps of a runStep trace (`step_24b` -> '24b', `step_14` -> 14), in order. */
const stepsOf = (trace: ReadonlyArray<{ step: string }>): StepId[] =>
  trace
    .filter((e) => e.step.startsWith('step_'))
    .map((e) => {
      const raw = e.step.slice('step_'.length);
      return (/^\d+$/.test(raw) ? Number(raw) : raw) as StepId;
    });
const json = (value: unknown) => JSON.stringify(value);
/** JSON with object keys sorted: two values are the same when their canonical texts are (whatever realm parsed them). */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );

/** Effects that answer, in order, what the recording's effects answered; any other call is a divergence. */
function recordedEffects(
  recorded: RecordedEffect[],
  diverge: (message: string) => void,
): { effects: FlowEffects; left: RecordedEffect[] } {
  const left = [...recorded];
  const effects: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const name of EFFECT_NAMES) {
    effects[name] = async (input) => {
      const next = left[0];
      if (!next || next.name !== name) {
        diverge(
          next
            ? `the machine called ${name} where the recording called ${next.name}`
            : `the machine called ${name}; the recording called nothing more`,
        );
        throw new ReplayDivergence(name);
      }
      left.shift();
      const given = maskSecrets(input);
      if (canonical(given) !== canonical(next.input)) {
        diverge(`the machine called ${name} with ${json(given)}; the recording with ${json(next.input)}`);
        throw new ReplayDivergence(name);
      }
      if (next.outcome === 'ok') return next.output;
      // An effect that threw, or had not settled when the request timed out (the runner answered upstream_error).
      const reason = next.outcome === 'error' ? (next.error?.reason ?? 'internal_error') : 'upstream_error';
      throw Object.assign(new Error(next.error?.message ?? `${name} did not settle`), { reason });
    };
  }
  return { effects: effects as unknown as FlowEffects, left };
}

/** The proof field a recorded answer handed out (masked), if any. */
const proofFieldOf = (data: Record<string, unknown>) =>
  ['phone_proof', 'pending_proof', 'register_proof', 'proof'].find((f) => data[f] === MASK);

/** Replays one request; returns its line and, when it left the recorded path, where. */
async function replayRequest(
  request: RecordedRequest,
): Promise<{ line: ReplayedLine; divergence?: Omit<Divergence, 'request' | 'action'> }> {
  const recordedAnswer = request.answer;
  const recordedReason = typeof recordedAnswer.data.reason === 'string' ? recordedAnswer.data.reason : undefined;
  const base = { n: request.n, action: request.action };
  if (request.resumed === undefined) {
    return {
      line: {
        ...base,
        resumed: null,
        steps: [],
        answer: { ok: false, step: null, flow: null, reason: recordedReason },
        skipped: `refused before the machine ran (${recordedReason ?? 'refused'})`,
      },
    };
  }
  const entry = ACTION_ENTRY[request.action];
  const { input, event } = flowRequest(entry, request.body, {
    claims: request.proof_claims?.claims ?? null,
    trusted: request.trusted === true,
  });
  const resumed = resumePointFor(input)?.state ?? 'refused';
  const trace: Array<{ step: string }> = [];
  const lastStep = (): StepId | null => stepsOf(trace).pop() ?? null;
  let effectDivergence: { message: string; step: StepId | null } | undefined;
  const { effects, left } = recordedEffects(
    request.effects,
    (message) => (effectDivergence ??= { message, step: lastStep() }),
  );

  let steps: StepId[];
  let answer: ReplayedLine['answer'];
  let proofField: string | undefined;
  try {
    const result = await runStep(provideEffects(effects), { input, event, trace, timeoutMs: 5000 });
    steps = result.steps;
    const out = result.output;
    answer = {
      ok: out.ok,
      step: out.ok ? out.nextStep : null,
      flow: out.flow,
      ...(out.failure ? { reason: out.failure.reason } : {}),
    };
    proofField = out.ok ? out.proof?.field : undefined;
  } catch (err) {
    steps = stepsOf(trace);
    const reason =
      err instanceof ReplayDivergence
        ? 'replay_divergence'
        : err instanceof FlowTimeoutError
          ? 'upstream_error'
          : ((err as { reason?: string }).reason ?? 'internal_error');
    if (
      !(err instanceof ReplayDivergence) &&
      !(err as { reason?: string }).reason &&
      !(err instanceof FlowTimeoutError)
    ) {
      // The machine itself failed (a resumed state that does not take the event): not the recorded path.
      effectDivergence ??= {
        message: `the machine failed: ${err instanceof Error ? err.message : String(err)}`,
        step: lastStep(),
      };
    }
    answer = { ok: false, step: null, flow: null, reason };
  }
  const line: ReplayedLine = { ...base, resumed, steps, answer };

  // Where the paths part, most telling first: the steps, then the effects, then the answer.
  const threw = effectDivergence !== undefined && answer.reason === 'replay_divergence';
  const compared = threw ? steps.length : Math.max(steps.length, request.steps.length);
  for (let i = 0; i < compared; i++) {
    if (steps[i] === request.steps[i]) continue;
    const step = steps[i] ?? steps[i - 1] ?? null;
    const where = steps[i] === undefined ? `stops after step ${arrow(steps)}` : `passes step ${steps[i]}`;
    return {
      line,
      divergence: {
        step,
        message: `the machine ${where} where the recording passes ${request.steps[i] ?? 'no further step'} (steps ${arrow(steps)}; recorded ${arrow(request.steps)})`,
      },
    };
  }
  if (effectDivergence) return { line, divergence: effectDivergence };
  if (left.length > 0) {
    return {
      line,
      divergence: {
        step: lastStep(),
        message: `the recording also called ${left.map((e) => e.name).join(', ')}; the machine did not`,
      },
    };
  }
  const recordedStep = (recordedAnswer.success ? (recordedAnswer.data.next_step as StepId | undefined) : null) ?? null;
  const recordedFlow = recordedAnswer.success
    ? ((recordedAnswer.data.flow as string | null | undefined) ?? null)
    : null;
  const say = (ok: boolean, step: StepId | null, flow: string | null, reason?: string) =>
    ok ? `step ${step} (flow ${flow})` : `refused ${reason}`;
  const recordedSays = say(recordedAnswer.success, recordedStep, recordedFlow, recordedReason);
  const replayedSays = say(answer.ok, answer.step, answer.flow, answer.reason);
  if (recordedSays !== replayedSays) {
    return {
      line,
      divergence: {
        step: answer.step ?? lastStep(),
        message: `the machine answers ${replayedSays}; the recording answered ${recordedSays}`,
      },
    };
  }
  const recordedProof = recordedAnswer.success ? proofFieldOf(recordedAnswer.data) : undefined;
  if (recordedProof !== proofField) {
    return {
      line,
      divergence: {
        step: answer.step,
        message: `the machine hands out ${proofField ?? 'no proof'}; the recording handed out ${recordedProof ?? 'no proof'}`,
      },
    };
  }
  return { line };
}

/** Replays a recorded journey request by request; stops at the first request that leaves the recorded path. */
export async function replayRecording(journey: RecordedJourney): Promise<ReplayResult> {
  if (journey?.format !== RECORDING_FORMAT || !Array.isArray(journey.requests)) {
    throw new Error(`not a recorded journey: "format" must be "${RECORDING_FORMAT}" (GET /_sandbox/journeys/<id>)`);
  }
  const result: ReplayResult = { journey: journey.name ? `${journey.id} "${journey.name}"` : journey.id, lines: [] };
  for (const request of journey.requests) {
    const { line, divergence } = await replayRequest(request);
    result.lines.push(line);
    if (divergence) {
      result.divergence = { request: request.n, action: request.action, ...divergence };
      break;
    }
  }
  return result;
}

/**
 * The journeys in a file's text: one recorded journey, an array of them, or the envelope
 * GET /_sandbox/journeys (every journey) or GET /_sandbox/journeys/<id> (one) answers.
 */
export function readRecordings(text: string): RecordedJourney[] {
  const parsed = JSON.parse(text) as unknown;
  const data =
    (parsed as { data?: unknown })?.data !== undefined && (parsed as { success?: unknown }).success !== undefined
      ? (parsed as { data: unknown }).data
      : parsed;
  if (Array.isArray(data)) return data as RecordedJourney[];
  const listed = (data as { journeys?: unknown })?.journeys;
  if (Array.isArray(listed)) return listed as RecordedJourney[];
  return [data as RecordedJourney];
}

/** The journey's path as printed: one line per request, then where it diverged (or that it did not). */
export function formatReplay(result: ReplayResult): string {
  const lines = [`journey ${result.journey}`];
  for (const line of result.lines) {
    const answer = line.answer.ok
      ? `answer ${line.answer.step} (${line.answer.flow})`
      : `refused ${line.answer.reason ?? ''}`.trim();
    const path = line.skipped
      ? line.skipped
      : `from ${String(line.resumed).padEnd(30)} steps ${arrow(line.steps).padEnd(26)} ${answer}`;
    lines.push(`  ${String(line.n).padStart(2)}. ${line.action.padEnd(16)} ${path}`);
  }
  const d = result.divergence;
  lines.push(
    d
      ? `DIVERGED at request ${d.request} (${d.action}), step ${d.step ?? '-'}: ${d.message}`
      : `ok: the machine takes the recorded path (${result.lines.length} requests)`,
  );
  return lines.join('\n');
}

async function main(args: string[]): Promise<number> {
  const files = args.filter((a) => a !== '--');
  if (files.length === 0) {
    process.stderr.write('usage: npm run replay -- <recording.json> [more.json ...]\n');
    return 2;
  }
  let diverged = false;
  for (const file of files) {
    let journeys: RecordedJourney[];
    try {
      journeys = readRecordings(readFileSync(file, 'utf8'));
    } catch (err) {
      process.stderr.write(`${file}: ${err instanceof Error ? err.message : String(err)}\n`);
      return 2;
    }
    for (const journey of journeys) {
      let result: ReplayResult;
      try {
        result = await replayRecording(journey);
      } catch (err) {
        process.stderr.write(`${file}: ${err instanceof Error ? err.message : String(err)}\n`);
        return 2;
      }
      process.stdout.write(`${formatReplay(result)}\n`);
      if (result.divergence) diverged = true;
    }
  }
  return diverged ? 1 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(2);
    },
  );
}
