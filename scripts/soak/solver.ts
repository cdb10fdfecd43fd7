import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { adopt } from './reaper';

/*
 * Solves the bot challenge's proof of work (docs/security.md, "Bot challenge") for whoever in the
 * soak is asked one: honest journeys, as the demo page's widget would, and the bot that pays. The
 * work runs in a child process (scripts/soak/solver-process.ts), one challenge at a time, so it
 * neither stalls the soak's event loop nor mixes its CPU with the soak's own: `cpuMs` is what the
 * solutions cost, and nothing else.
 */

interface Answer {
  payload?: string;
  cpuMs?: number;
  error?: string;
}

export class PowSolver {
  solves = 0;
  cpuMs = 0;
  private child?: ChildProcess;
  private queue: Promise<unknown> = Promise.resolve();

  /** Starts the child now rather than at the first challenge (its start-up is not a solution's cost). */
  start(): void {
    this.child ??= adopt(
      fork(join(__dirname, 'solver-process.ts'), [], {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      }),
    );
  }

  /** The payload to send back in `challenge`: base64 of `{ challenge, solution }`. */
  solve(challenge: unknown): Promise<string> {
    const turn = this.queue.then(() => this.ask(challenge));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private ask(challenge: unknown): Promise<string> {
    this.start();
    const child = this.child!;
    return new Promise((resolve, reject) => {
      const exited = () => reject(new Error(`the solver exited (${child.exitCode ?? child.signalCode})`));
      child.once('exit', exited);
      child.once('message', (answer: Answer) => {
        child.off('exit', exited);
        if (answer.payload === undefined) return reject(new Error(`the solver failed: ${answer.error}`));
        this.solves += 1;
        this.cpuMs += answer.cpuMs ?? 0;
        resolve(answer.payload);
      });
      child.send(challenge as object);
    });
  }

  close(): void {
    if (this.child?.connected) this.child.disconnect();
  }
}
