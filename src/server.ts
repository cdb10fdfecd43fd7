import type { Server, ServerResponse } from 'node:http';
import { loadConfiguration, ConfigError, type LoadedConfig } from './core/config/load';
import type { Logger } from './core/logger';
import { banner, showsBanner } from './banner';
import { startService, type Service } from './service';

async function main(): Promise<void> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfiguration();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  let service: Service;
  try {
    service = await startService(loaded.config, {}, { choice: loaded });
  } catch (err) {
    // A configuration only the domain can judge (otp.test_numbers normalised as requests are) exits as any bad configuration.
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    // A listen failure is already logged by the service; this also covers a sandbox that did not start.
    // No process.exit: the service released what it opened, and the async OTP log file must finish opening.
    process.stderr.write(`cannot start: ${(err as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  const { server, deps, closeResources } = service;
  const fatal = (err: Error) => {
    deps.log.fatal({ err }, 'server error');
    process.exit(1);
  };
  server.on('error', fatal);
  service.metricsServer?.on('error', fatal);

  handleShutdown(server, service.config.server.shutdown_grace_seconds * 1000, deps.log, closeResources);
  if (
    showsBanner({
      sandbox: service.config.sandbox.enabled,
      production: loaded.environment === 'production',
      terminal: process.stdout.isTTY === true,
    })
  ) {
    process.stdout.write(banner(service.url, service.config.sms));
  }
}

/*
 * Graceful shutdown on SIGTERM and SIGINT: stop accepting connections at once, let in-flight
 * requests finish (their connections close after the answer instead of staying keep-alive),
 * close whatever is still open when the grace period ends, then close the metrics listener
 * (`metrics.port`), release the dependencies (ingest queue, store) and exit 0. A second signal
 * skips the wait.
 */
function handleShutdown(server: Server, graceMs: number, log: Logger, closeResources: () => Promise<void>): void {
  const inFlight = new Set<ServerResponse>();
  let stopping = false;
  const closeAfterAnswer = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  server.on('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    res.on('close', () => inFlight.delete(res));
    // A request that arrives on a kept-alive connection during shutdown still gets its answer.
    if (stopping) closeAfterAnswer(res);
  });

  const stop = (signal: string) => {
    if (stopping) {
      log.warn({ signal, in_flight: inFlight.size }, 'second signal: closing open connections now');
      server.closeAllConnections();
      return;
    }
    stopping = true;
    for (const res of inFlight) closeAfterAnswer(res);
    const force = setTimeout(() => {
      log.warn({ in_flight: inFlight.size }, 'grace period over: closing remaining connections');
      server.closeAllConnections();
    }, graceMs);
    force.unref();
    // Whatever hangs while closing the dependencies must not keep a stopped instance around.
    const watchdog = setTimeout(() => {
      log.error('shutdown did not finish in time: exiting');
      process.exit(1);
    }, graceMs + 15_000);
    watchdog.unref();
    server.close(async () => {
      clearTimeout(force);
      let code = 0;
      try {
        await closeResources();
      } catch (err) {
        log.error({ err }, 'error while closing resources');
        code = 1;
      }
      log.info({ exit_code: code }, 'stopped');
      process.exit(code);
    });
    server.closeIdleConnections();
    // Logged once the listener is closed: from here on a new connection is refused.
    log.info(
      { signal, in_flight: inFlight.size, grace_seconds: graceMs / 1000 },
      'shutting down: no new connections, finishing in-flight requests',
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
