import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort } from '../../test/support/ports';
import { adopt } from './reaper';
import { stopProcess } from './redis';

/*
 * The service instances: each is `src/server.ts`, the process `npm start` runs, with
 * NODE_ENV=production and one shared CONFIG_FILE (its port from SERVER__PORT), its logs in the
 * soak's temp dir. The fleet plays the load balancer: round-robin over the instances in
 * rotation. A killed instance stays in rotation for a health-check interval, as behind a real
 * balancer, so requests meet its closed port too; its replacement joins once /readyz answers.
 */

const ROOT = resolve(__dirname, '../..');
const SERVER = join(ROOT, 'src/server.ts');
const LEASH = pathToFileURL(join(__dirname, 'leash.ts')).href;
/** How long a balancer keeps sending to a dead instance before its health check removes it. */
const HEALTH_CHECK_MS = 1_000;

export interface Instance {
  name: string;
  url: string;
  process: ChildProcess;
  log: string;
}

async function waitReady(instance: Instance, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (instance.process.exitCode !== null)
      throw new Error(
        `${instance.name} exited with code ${instance.process.exitCode} before it was ready (log: ${instance.log})`,
      );
    const ready = await fetch(`${instance.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${instance.name} was not ready within ${timeoutMs} ms (log: ${instance.log})`);
}

async function startInstance(name: string, configFile: string, logDir: string): Promise<Instance> {
  const port = await freePort();
  const log = join(logDir, `${name}.log`);
  const fd = openSync(log, 'a');
  const child = adopt(
    spawn(process.execPath, ['--import', 'tsx', '--import', LEASH, SERVER], {
      cwd: ROOT,
      stdio: ['ignore', fd, fd, 'ipc'],
      env: { ...process.env, NODE_ENV: 'production', CONFIG_FILE: configFile, SERVER__PORT: String(port) },
    }),
  );
  closeSync(fd);
  const instance = { name, url: `http://127.0.0.1:${port}`, process: child, log };
  await waitReady(instance);
  return instance;
}

export class Fleet {
  private rotation: Instance[] = [];
  private readonly all: Instance[] = [];
  private turn = 0;
  private started = 0;

  constructor(
    private readonly configFile: string,
    private readonly logDir: string,
  ) {}

  async start(count: number): Promise<void> {
    const started = await Promise.all(Array.from({ length: count }, () => this.launch()));
    this.rotation.push(...started);
  }

  private launch(): Promise<Instance> {
    this.started += 1;
    return startInstance(`instance-${this.started}`, this.configFile, this.logDir).then(
      (instance) => (this.all.push(instance), instance),
    );
  }

  /** The next instance in round-robin order. */
  next(): Instance {
    const instance = this.rotation[this.turn % this.rotation.length]!;
    this.turn += 1;
    return instance;
  }

  /** Another instance than `one` when there is one: where a concurrent duplicate goes. */
  other(one: Instance): Instance {
    const others = this.rotation.filter((i) => i !== one);
    return others[this.turn++ % Math.max(1, others.length)] ?? one;
  }

  size(): number {
    return this.rotation.length;
  }

  /** SIGKILL one instance, drop it from rotation after a health-check interval, start its replacement. */
  async killAndReplace(onKilled: (instance: Instance) => void): Promise<Instance> {
    const victim = this.rotation[0]!;
    victim.process.kill('SIGKILL');
    onKilled(victim);
    await new Promise((r) => setTimeout(r, HEALTH_CHECK_MS));
    this.rotation = this.rotation.filter((i) => i !== victim);
    const replacement = await this.launch();
    this.rotation.push(replacement);
    return replacement;
  }

  /** Graceful stop of every instance (SIGTERM: in-flight requests finish, ingests are handed back). */
  async stop(): Promise<void> {
    await Promise.all(this.all.map((i) => stopProcess(i.process, 20_000)));
  }

  logs(): string[] {
    return this.all.map((i) => i.log);
  }
}
