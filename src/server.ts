import type { Server } from 'node:http';
import { loadConfig, ConfigError } from './config/load';
import { createDeps } from './deps';
import { createApp } from './app';
import { createLogger } from './logger';
import { startSandbox, type Sandbox } from './sandbox';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  let sandbox: Sandbox | undefined;
  if (config.sandbox.enabled) {
    sandbox = await startSandbox(config, createLogger(config.log.level));
    config = sandbox.config;
  }
  const deps = createDeps(config);
  const outbox = sandbox?.outbox;
  const app = createApp(deps, {
    routes: (router) => {
      // Only the sandbox has an outbox: outside it the route does not exist.
      if (outbox) router.get('/_sandbox/outbox', (ctx) => (ctx.body = { success: true, error: null, data: { messages: outbox.list() } }));
    },
  });
  const server: Server = app.listen(config.server.port, config.server.host, () => {
    deps.log.info({ host: config.server.host, port: config.server.port, sandbox: config.sandbox.enabled }, `listening on http://${config.server.host}:${config.server.port}`);
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => {
      deps.log.warn('grace period over: closing remaining connections');
      server.closeAllConnections();
    }, config.server.shutdown_grace_seconds * 1000);
    force.unref();
    server.close(async () => {
      await deps.close();
      await sandbox?.close();
      deps.log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
