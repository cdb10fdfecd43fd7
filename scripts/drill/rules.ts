/*
 * The shipped rules on a faster clock, for the drill only: every `for` and every range window
 * (`[5m]`, `[1h]`, `[1d]`) divided by one factor, written to a temporary copy. Windows and `for`
 * scale together so that what a rule means holds at the drill's speed: one refusal true for a
 * 5-minute window never reaches a 10-minute `for`, at any factor. A window is kept at 5 s at
 * least (five 1-second scrapes: rate() needs two samples) and a `for` at 1 s.
 */

const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 };
const MIN_WINDOW_S = 5;
const MIN_FOR_S = 1;

/** A Prometheus duration (`1h30m`, `5m`, `90s`) in seconds. */
export function durationSeconds(text: string): number {
  let total = 0;
  const parts = text.match(/\d+(?:ms|[smhdwy])/g);
  if (!parts || parts.join('') !== text) throw new Error(`not a Prometheus duration: ${text}`);
  for (const part of parts) {
    const [, n, unit] = /^(\d+)(ms|[smhdwy])$/.exec(part)!;
    total += Number(n) * UNITS[unit!]!;
  }
  return total;
}

/** Seconds as a Prometheus duration, whole milliseconds. */
const asDuration = (seconds: number) => `${Math.round(seconds * 1000)}ms`;

/** The rules file with every `for` and range window divided by `factor`. */
export function scaleRules(text: string, factor: number): string {
  if (!(factor >= 1)) throw new Error(`the factor must be 1 or more, not ${factor}`);
  return text
    .replace(
      /^(\s+for:\s*)(\S+)\s*$/gm,
      (_, head: string, d: string) => `${head}${asDuration(Math.max(MIN_FOR_S, durationSeconds(d) / factor))}`,
    )
    .replace(
      /\[(\d+(?:ms|[smhdwy])(?:\d+(?:ms|[smhdwy]))*)(:[^\]]*)?\]/g,
      (_, d: string, step: string | undefined) =>
        `[${asDuration(Math.max(MIN_WINDOW_S, durationSeconds(d) / factor))}${step ?? ''}]`,
    );
}

/** A documented time (seconds) at the drill's speed: the same floor as the rules' `for`. */
export const scaled = (seconds: number, factor: number): number => Math.max(MIN_FOR_S, seconds / factor);
