import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

/*
 * The benchmark's processes talk over Node's IPC channel: a child announces itself once it
 * listens (`announce`), answers commands one at a time (`serve`), and the runner drives it
 * (`startChild`). TypeScript children run through tsx (`node --import tsx`), which compiles at
 * load time only: the code that runs under load is the same as under `npm start`.
 */

export interface ChildOptions {
  /** Extra node flags (`--cpu-prof`, `--expose-gc`). */
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Where the child's stdout goes: its logs. Default: discarded (/dev/null). */
  stdout?: 'ignore' | 'inherit';
  /** How long to wait for the announcement. */
  timeoutMs?: number;
  /** Its working directory, where `--import tsx` is resolved from: another build's checkout runs on its own tsx and node_modules. */
  cwd?: string;
  /** CPUs to pin the child to (`taskset -c` list, e.g. `0` or `1-3`); taskset execs node, so the pid stays node's. */
  cpus?: string;
}

export interface Child<A> {
  process: ChildProcess;
  /** What the child announced when ready. */
  ready: A;
  /** Sends one command and resolves with the child's answer to it. */
  call<T = unknown>(command: Record<string, unknown>): Promise<T>;
  /** SIGTERM, then SIGKILL after a grace period; resolves once it exited. */
  stop(): Promise<void>;
}

interface Envelope {
  ready?: unknown;
  id?: number;
  result?: unknown;
  error?: string;
}

export const benchFile = (name: string) => resolve(__dirname, name);

export function announce(ready: unknown): void {
  process.send?.({ ready });
  // The runner going away (Ctrl-C, a crash) must not leave a child behind.
  process.on('disconnect', () => process.exit(0));
}

/** Answers the runner's commands with `handler` (one answer per command, errors as text). */
export function serve(handler: (command: Record<string, unknown>) => Promise<unknown>): void {
  process.on('message', (message: { id: number; command: Record<string, unknown> }) => {
    handler(message.command).then(
      (result) => process.send?.({ id: message.id, result }),
      (err: unknown) =>
        process.send?.({ id: message.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
    );
  });
}

export function startChild<A>(file: string, args: string[] = [], options: ChildOptions = {}): Promise<Child<A>> {
  const command = [process.execPath, ...(options.nodeArgs ?? []), '--import', 'tsx', file, ...args];
  if (options.cpus) command.unshift('taskset', '-c', options.cpus);
  const child = spawn(command[0]!, command.slice(1), {
    stdio: ['ignore', options.stdout ?? 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, ...options.env },
    cwd: options.cwd,
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  let nextId = 1;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.on('message', (message: Envelope) => {
    if (message.id === undefined) return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(message.error));
    else waiter?.resolve(message.result);
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values())
      waiter.reject(new Error(`${file} exited (${signal ?? code}) before answering`));
    pending.clear();
  });

  return new Promise((resolveChild, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not start within ${options.timeoutMs ?? 30_000} ms`));
    }, options.timeoutMs ?? 30_000);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited with code ${code} before it was ready`));
    };
    child.once('exit', onExit);
    child.on('message', function onReady(message: Envelope) {
      if (!('ready' in message)) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.off('message', onReady);
      resolveChild({
        process: child,
        ready: message.ready as A,
        call: <T>(command: Record<string, unknown>) =>
          new Promise<T>((resolveCall, rejectCall) => {
            const id = nextId++;
            pending.set(id, { resolve: resolveCall as (value: unknown) => void, reject: rejectCall });
            child.send({ id, command });
          }),
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
          child.kill('SIGTERM');
          await exited;
          clearTimeout(force);
        },
      });
    });
  });
}
