import pino from 'pino';
import request from 'supertest';
import type { Deps } from '../../src/domain/deps';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import type { SandboxFake } from '../../src/sandbox/fake';
import { testApp, testConfig, testDeps } from './app';

/*
 * The real app on the embedded sandbox upstreams, for one test file or describe block: started
 * before its tests, its dependencies and the sandbox closed after them. `fakes` limits the sandbox
 * to the upstreams the tests speak to (all of them by default). The tests share the sandbox's
 * accounts, outbox and limits: a test that needs them fresh starts its own.
 */

export interface SandboxApp {
  readonly sandbox: Sandbox;
  readonly deps: Deps;
  /** The app's request handler, for supertest. */
  readonly server: ReturnType<ReturnType<typeof testApp>['callback']>;
  /** One action, as a client posts it (`POST /?action=<name>`). */
  call(action: string, body?: object): request.Test;
  /** The code of the latest SMS or email the outbox holds for a recipient (a phone or address it contains). */
  codeFor(channel: 'sms' | 'email', to: string): string | undefined;
}

export function useSandboxApp(fakes?: Array<() => SandboxFake>): SandboxApp {
  let started: { sandbox: Sandbox; deps: Deps; server: SandboxApp['server'] } | undefined;
  beforeAll(async () => {
    const sandbox = await startSandbox(testConfig(), pino({ level: 'silent' }), fakes);
    const deps = testDeps(sandbox.config);
    started = { sandbox, deps, server: testApp(deps).callback() };
  });
  afterAll(async () => {
    await started?.deps.close();
    await started?.sandbox.close();
    started = undefined;
  });
  const running = () => {
    if (!started) throw new Error('useSandboxApp: read outside the tests it serves');
    return started;
  };
  return {
    get sandbox() {
      return running().sandbox;
    },
    get deps() {
      return running().deps;
    },
    get server() {
      return running().server;
    },
    call: (action, body = {}) => request(running().server).post(`/?action=${action}`).send(body),
    codeFor: (channel, to) =>
      running()
        .sandbox.outbox.list(channel)
        .find((m) => m.to.includes(to))?.code,
  };
}
