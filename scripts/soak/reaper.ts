import type { ChildProcess } from 'node:child_process';

/*
 * Every process the soak starts (Redis, the service instances) is registered here and killed
 * when the soak ends, however it ends: normal exit, a failed check, an exception, Ctrl-C.
 * The instances also watch their IPC channel (scripts/soak/leash.ts), so a runner killed with
 * SIGKILL, which runs no handler, does not leave them behind either.
 */

const children = new Set<ChildProcess>();

export function adopt(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  // A child killed on purpose (SIGKILL, the soak's fault) resets its IPC channel: that is its exit, watched above,
  // not the soak's failure (unheard, the 'error' event ended the run as an uncaught exception).
  child.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') throw err;
  });
  return child;
}

/** SIGKILL to every child still running; synchronous, so it also works in an `exit` handler. */
export function killAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export function killChildrenOnExit(): void {
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`soak: ${signal}: stopping every child process\n`);
      killAll();
      process.exit(130);
    });
  }
  process.once('uncaughtException', (err) => {
    process.stderr.write(`soak: ${err.stack ?? err.message}\n`);
    killAll();
    process.exit(1);
  });
}
