import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/support/ports';

/*
 * A real Prometheus (and its promtool) from Debian's `prometheus` package, started by the test
 * or the drill (npm run drill) that needs it on a free loopback port with its storage in a temporary directory: a system
 * Prometheus the package may have started is never used nor disturbed. A missing binary fails
 * the test loudly (scripts/test.sh installs it with apt-get); it is never skipped.
 */

function assertInstalled(command: 'prometheus' | 'promtool'): void {
  const probe = spawnSync(command, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `${command} is not installed: run the README test command (\`npm test\`), which installs Debian's prometheus package with apt-get`,
    );
  }
}

/** promtool with these arguments: its exit code and everything it printed. */
export function promtool(args: string[], cwd: string): { status: number | null; output: string } {
  assertInstalled('promtool');
  const run = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

export interface PrometheusServer {
  url: string;
  /** GET /api/v1/<path>: the `data` of a success, or the error Prometheus gave, thrown. */
  api<T = unknown>(path: string, params?: Record<string, string>): Promise<T>;
  stop(): Promise<void>;
}

interface ApiAnswer {
  status: 'success' | 'error';
  data?: unknown;
  errorType?: string;
  error?: string;
}

/** Prometheus scraping `target` (host:port, path /metrics) every second, with these rule files loaded. */
export async function startPrometheus(options: {
  target: string;
  ruleFiles: string[];
  startTimeoutMs?: number;
  /** `--enable-feature` flags, such as `exemplar-storage`. */
  features?: string[];
}): Promise<PrometheusServer> {
  assertInstalled('prometheus');
  const dir = await mkdtemp(join(tmpdir(), 'lfa-prometheus-'));
  const port = await freePort();
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    rule_files: options.ruleFiles,
    scrape_configs: [{ job_name: 'login-frontend', static_configs: [{ targets: [options.target] }] }],
  };
  // JSON is YAML: no serializer needed for the configuration file.
  await writeFile(join(dir, 'prometheus.yml'), JSON.stringify(config));
  let output = '';
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // Info, not warn: kept only for the error below, where it says which stage a slow start was in.
      '--log.level=info',
      ...(options.features ?? []).map((feature) => `--enable-feature=${feature}`),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode === null) {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    }
    await rm(dir, { recursive: true, force: true });
  };

  // Generous: on a loaded 2-core CI machine a start has taken over 15 s. A budget, not a measurement.
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`prometheus exited with code ${child.exitCode}: ${output}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus did not become ready within ${startTimeoutMs / 1000} s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const api = async <T>(path: string, params: Record<string, string> = {}): Promise<T> => {
    const res = await fetch(`${url}/api/v1/${path}?${new URLSearchParams(params).toString()}`);
    const body = (await res.json()) as ApiAnswer;
    if (body.status !== 'success')
      throw new Error(`${path} ${JSON.stringify(params)}: ${body.errorType}: ${body.error}`);
    return body.data as T;
  };
  return { url, api, stop };
}
