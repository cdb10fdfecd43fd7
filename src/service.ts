import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './core/config/schema';
import { describeEnvironment, type EnvironmentChoice } from './core/config/load';
import { createDeps, type Deps, type DepsOverrides } from './domain/deps';
import { diagnosticsCaller } from './domain/guard';
import { weakenedDefences } from './core/config/weakened';
import { configWarnings } from './core/config/warnings';
import { createApp, createMetricsApp } from './http/app';
import { createHttpServer } from './http/connections';
import { warnWhenTrustProxyDeprecated } from './http/client-address';
import { createLogger } from './core/logger';
import type { Sandbox } from './sandbox';
import { mountDemo } from './http/demo';
import { mountSandboxRoutes } from './http/sandbox-routes';
import { journeyRecorderFor } from './flows/journey-recorder';
import { mountFunnel } from './http/funnel';
import { keysOf } from './http/keys';

/*
 * The whole service on one listening socket: the sandbox upstreams when configured, the
 * dependencies, the app with its extra GET routes (sandbox outbox, demo page). With
 * `metrics.port` set, a second socket on `metrics.host` serves GET /metrics without a token, so
 * Prometheus needs no secret and the public port need not expose metrics. src/server.ts runs it
 * as the process; the end-to-end tests start it in-process on port 0.
 */

export interface Service {
  /** The configuration in effect (with the sandbox on, every upstream points at its fake). */
  config: Config;
  deps: Deps;
  server: Server;
  /** The sandbox upstreams and their outbox, when `sandbox.enabled`. */
  sandbox?: Sandbox;
  /** http://host:port of the bound socket (port 0 picks a free one). */
  url: string;
  /** The metrics listener, when `metrics.port` is set. */
  metricsServer?: Server;
  /** http://host:port of the metrics listener. */
  metricsUrl?: string;
  /** Closes the metrics listener, then releases the dependencies (ingest queue, store) and the sandbox; the server is closed by the caller. */
  closeResources(): Promise<void>;
  /** Closes the server at once (open connections too), then the resources: for tests and tools. */
  close(): Promise<void>;
}

/** How the process came to its configuration (src/server.ts): named in the start line and in the warnings. */
export interface StartOptions {
  choice?: Pick<EnvironmentChoice, 'environment' | 'decidedBy'>;
}

export async function startService(
  initial: Config,
  overrides: DepsOverrides = {},
  start: StartOptions = {},
): Promise<Service> {
  let config = initial;
  // Unnamed (tests, tools): an app with the sandbox is not production, which refuses it; one without is.
  const environment = start.choice?.environment ?? (config.sandbox.enabled ? 'development' : 'production');
  let sandbox: Sandbox | undefined;
  if (config.sandbox.enabled) {
    // Loaded only when enabled: the sandbox's SMTP server (smtp-server) is a development
    // dependency, absent from a production install (npm ci --omit=dev). A require, not import():
    // the build is CommonJS, and Jest runs CommonJS without its ESM loader.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startSandbox } = require('./sandbox') as typeof import('./sandbox');
    sandbox = await startSandbox(config, createLogger(config.log.level));
    config = sandbox.config;
  }
  const deps = createDeps(config, overrides);
  if (deps.passkeys.enabled) {
    // Migrated before serving: an instance that cannot reach or migrate the database never answers a passkey request.
    try {
      await deps.passkeys.store();
    } catch (err) {
      deps.log.fatal({ err }, 'database: cannot open or migrate');
      await deps.close();
      await sandbox?.close();
      throw err;
    }
  }
  // A weakened defence is a deliberate, visible choice: one line each at every start (and on /readyz).
  for (const { key, exposes } of weakenedDefences(config))
    deps.log.warn({ event: 'weakened_defence', key }, `${key} weakens a defence: ${exposes}`);
  for (const { key, says } of configWarnings(config, environment))
    deps.log.warn({ event: 'config_warning', key }, `${key}: ${says}`);
  warnWhenTrustProxyDeprecated(config.server, deps.log);
  const outbox = sandbox?.outbox;
  // Recorded login journeys: in the sandbox and with `debug` on (the flow runner records into the same recorder).
  const journeys = journeyRecorderFor(deps);
  const app = createApp(deps, {
    environment,
    routes: (router) => {
      // Only the sandbox has an outbox, only recording has journeys: otherwise the routes do not exist.
      mountSandboxRoutes(router, {
        outbox,
        journeys,
        mayReadJourneys: (ctx) => diagnosticsCaller({ deps, keys: keysOf(ctx) }),
        reset: sandbox && deps.reset ? () => (deps.reset!(), sandbox!.reset()) : undefined,
      });
      // Before the demo: where the demo is off its catch-all would answer /flows/* as unknown.
      mountFunnel(router, deps);
      mountDemo(router, deps);
    },
  });

  let metricsServer: Server | undefined;
  const closeResources = async () => {
    // Closed after the service port has drained: scrapes still see the shutdown's grace period.
    if (metricsServer) {
      const closing = metricsServer;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    }
    await deps.close();
    await sandbox?.close();
  };
  let server: Server;
  try {
    server = await listen(
      createHttpServer(app.callback(), config.server, deps.log).listen(config.server.port, config.server.host),
    );
  } catch (err) {
    deps.log.fatal({ err }, 'cannot listen');
    await closeResources();
    throw err;
  }
  // The bound port, not the configured one: port 0 picks a free port.
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.server.host}:${port}`;
  // Which environment, and which key decided it (never its value): the first thing to read when production was not meant.
  const judged = start.choice ? { environment, decided_by: start.choice.decidedBy } : {};
  deps.log.info(
    { host: config.server.host, port, sandbox: config.sandbox.enabled, ...judged },
    `listening on ${url}${start.choice ? `: ${describeEnvironment(start.choice)}` : ''}`,
  );

  let metricsUrl: string | undefined;
  if (config.metrics.port !== 0) {
    try {
      metricsServer = await listen(createMetricsApp(deps).listen(config.metrics.port, config.metrics.host));
    } catch (err) {
      deps.log.fatal({ err, host: config.metrics.host, port: config.metrics.port }, 'cannot listen for metrics');
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeResources();
      throw err;
    }
    metricsUrl = `http://${config.metrics.host}:${config.metrics.port}`;
    deps.log.info(
      { host: config.metrics.host, port: config.metrics.port },
      `metrics listening on ${metricsUrl}/metrics`,
    );
  }

  return {
    config,
    deps,
    server,
    sandbox,
    url,
    metricsServer,
    metricsUrl,
    closeResources,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeResources();
    },
  };
}

function listen(server: Server): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}
