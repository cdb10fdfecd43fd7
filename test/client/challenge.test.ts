import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { challengeOf, createClient, createJourney, type Challenge, type Client } from '../../client/src';
import type { Deps } from '../../src/domain/deps';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { sandboxSeedUsers } from '../../src/sandbox/identity';
import { testApp, testConfig, testDeps } from '../support/app';
import { solvePow } from '../support/challenge';

/*
 * The typed client and the bot challenge, against the real app with `challenge.mode: always`:
 * a `challenge_required` answer is typed (challengeOf gives the challenge), the journey takes
 * the solution in the same call repeated, and `resend` never sends a spent solution again.
 */

const mario = sandboxSeedUsers[0]!;
let sandbox: Sandbox;
let deps: Deps;
let server: Server;
let client: Client;
let now = Date.now();

beforeAll(async () => {
  sandbox = await startSandbox(
    testConfig({ challenge: { mode: 'always', pow_difficulty: 2000 } }),
    pino({ level: 'silent' }),
  );
  deps = testDeps(sandbox.config, { now: () => now });
  server = testApp(deps).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await deps.close();
  await sandbox.close();
});

describe('the typed client and the bot challenge', () => {
  it('types the challenge_required answer, takes the solution in journey.login, and does not resend it', async () => {
    const journey = createJourney(client);
    const asked = await journey.login({ identifier: mario.email });
    const challenge: Challenge | undefined = challengeOf(asked);
    expect(challenge).toMatchObject({ provider: 'pow', signature: expect.any(String) });
    if (challenge?.provider !== 'pow') throw new Error('a proof of work was expected');
    expect(journey.state.step).toBeNull();

    const started = await journey.login({ identifier: mario.email, challenge: await solvePow(challenge as never) });
    expect(started).toMatchObject({ success: true, data: { next_step: 33 } });
    expect(challengeOf(started)).toBeUndefined();

    now += 61_000;
    // resend repeats the request without the spent solution: it is asked again, not refused as spent.
    const again = await journey.resend();
    expect(again.success).toBe(false);
    expect(again.data).toEqual({ reason: 'challenge_required', challenge: expect.any(Object) });
  });
});
