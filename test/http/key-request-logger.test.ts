import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { z } from 'zod';
import { defineAction, type Action } from '../../src/actions/action';
import type { Deps } from '../../src/domain/deps';
import { testApp, testConfig, testDeps } from '../support/app';

/*
 * A request that presents a key has it checked before anything else (src/http/keys.ts). The
 * request's child logger is made only when something is logged: a right key logs nothing and so
 * makes none (each one cost a pino child per internal call, get_user's every answer); a wrong
 * key is still logged, with the request's id and without the value.
 */

const INTERNAL_KEY = 'internal-key-0123456789abcdef';
const echo = defineAction({
  name: 'echo',
  request: z.object({}).loose(),
  handler: async () => ({ data: { ok: true } }),
});

function setup() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino(
    { level: 'warn' },
    new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }),
  );
  const children = { made: 0 };
  const child = log.child.bind(log);
  log.child = ((...args: Parameters<typeof log.child>) => (children.made++, child(...args))) as typeof log.child;
  const deps: Deps = testDeps(testConfig({ security: { internal_key: INTERNAL_KEY } }), { log });
  return {
    deps,
    lines,
    children,
    server: testApp(deps, { actions: new Map([[echo.name, echo as unknown as Action]]) }).callback(),
  };
}

describe('the request logger of a key check', () => {
  it('makes no child logger for a right key, and logs a wrong one with the request id and no value', async () => {
    const { deps, lines, children, server } = setup();
    try {
      for (let i = 0; i < 3; i++)
        expect((await request(server).post('/echo').set('x-internal-key', INTERNAL_KEY).send({})).status).toBe(200);
      expect(children.made).toBe(0);
      expect(lines).toEqual([]);

      const wrong = await request(server)
        .post('/echo')
        .set('x-internal-key', 'wrong-guess-0123456789')
        .set('x-request-id', 'req-wrong-1')
        .send({});
      expect(wrong.status).toBe(200);
      expect(children.made).toBe(1);
      expect(lines).toEqual([
        expect.objectContaining({
          event: 'wrong_key',
          header: 'x-internal-key',
          request_id: 'req-wrong-1',
          msg: 'wrong key refused',
        }),
      ]);
      expect(JSON.stringify(lines)).not.toContain('wrong-guess');
    } finally {
      await deps.close();
    }
  });
});
