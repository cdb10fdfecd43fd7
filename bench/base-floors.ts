/*
 * What `--against <ref> --strict` holds each service case to: its own work per answer (own µs)
 * over the base build's, median of the paired rounds. `floor` is what a run must meet today:
 * set so that today's build passes against itself, with a tenth of slack for what a quiet
 * machine's pair of instances cannot resolve (A/A pairs read 1.00-1.04, docs/performance.md).
 * `target` is issue 36's aim, half the base's own work on every hot path, not yet met: when a
 * round meets it, the floor moves down to what was met.
 */

export interface BaseFloor {
  floor: number;
  target?: number;
}

const today = 1.1;
const half = 0.5;

export const BASE_FLOORS: Readonly<Record<string, BaseFloor>> = {
  noop_action: { floor: today, target: half },
  otp_generate: { floor: today, target: half },
  verify_otp: { floor: today, target: half },
  login: { floor: today, target: half },
  'login+funnel': { floor: today },
  get_user: { floor: today, target: half },
  'otp_generate+info': { floor: today },
  'verify_otp+info': { floor: today },
  'otp_generate@redis': { floor: today, target: half },
  'verify_otp@redis': { floor: today, target: half },
};

/** Rounds of a build-against-build ratio that disagree by more than this share of their median are NOISY. */
export const BASE_NOISY_SPREAD = 0.1;
