import { readFileSync } from 'node:fs';

/*
 * CPU accounting from /proc (Linux), read around each case: how much CPU the app under load
 * spent per answer (a cost that does not depend on how many cores it got), how busy the load
 * generator was, and how much of the machine went to processes that are not the benchmark's
 * (other work on a shared machine: the figure that says a run was noisy). Elsewhere: null.
 */

const TICKS_PER_SECOND = 100;

/** user + system CPU seconds of one process (all its threads), or null. */
function processCpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Busy and total CPU seconds of the whole machine (all cores), or null. */
function machineCpuSeconds(): { busy: number; total: number } | null {
  try {
    const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = values.map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
    return { busy: busy / TICKS_PER_SECOND, total: (busy + idle! + iowait!) / TICKS_PER_SECOND };
  } catch {
    return null;
  }
}

export interface CpuUse {
  /** CPU seconds of the app under load per answer, in microseconds. */
  appMicrosPerRequest: number | null;
  /** Share of one core the app under load used. */
  appCores: number | null;
  /** Share of one core the load generator used. */
  loadCores: number | null;
  /** Cores' worth of CPU used by processes that are not the benchmark's. */
  otherCores: number | null;
}

export interface CpuWatch {
  stop(requests: number): CpuUse;
}

/** Starts watching `app` (the process under load), `load` and `ours` (every other benchmark process). */
export function watchCpu(app: number | undefined, load: number | undefined, ours: Array<number | undefined>): CpuWatch {
  const started = process.hrtime.bigint();
  const sample = () => ({
    app: processCpuSeconds(app),
    load: processCpuSeconds(load),
    ours:
      ours.map(processCpuSeconds).reduce<number>((sum, s) => sum + (s ?? 0), 0) + (processCpuSeconds(process.pid) ?? 0),
    machine: machineCpuSeconds(),
  });
  const before = sample();
  return {
    stop(requests) {
      const after = sample();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
      const appSeconds = delta(before.app, after.app);
      const loadSeconds = delta(before.load, after.load);
      const machineBusy = before.machine && after.machine ? after.machine.busy - before.machine.busy : null;
      const oursSeconds = (appSeconds ?? 0) + (loadSeconds ?? 0) + (after.ours - before.ours);
      return {
        appMicrosPerRequest: appSeconds === null || requests === 0 ? null : (appSeconds * 1e6) / requests,
        appCores: appSeconds === null ? null : appSeconds / seconds,
        loadCores: loadSeconds === null ? null : loadSeconds / seconds,
        otherCores: machineBusy === null ? null : Math.max(0, machineBusy - oursSeconds) / seconds,
      };
    },
  };
}
