import { journeyDiagrams } from '../../machines';
import { exampleRequest } from '../../src/http/demo/flows';
import { startSecurityApp, type SecurityApp } from '../security/support';

/*
 * The examples /flows shows run as written against the sandbox (`npm start`): the same bodies,
 * with the code a reader would copy from the outbox and the proofs earlier answers handed out,
 * reach the same steps. Journeys that end with the sandbox's seeded users (Mario, Giulia, Elena, Francesca) only:
 * a registration's new uid is the sandbox's to choose.
 */

const RUNNABLE = ['phone-login', 'email-login-with-phone', 'email-login-unconfirmed-phone', 'email-login-phone-declined', 'email-login-add-phone', 'password'];
const PROOF = /^‹la (\w+) della risposta (\d+)›$/;
const CODE = /^‹il codice in /;

describe('the /flows examples against the sandbox', () => {
  let app: SecurityApp;
  afterEach(async () => {
    await app?.close();
  });

  it.each(RUNNABLE)('%s: every example request reaches the step the page shows', async (id) => {
    app = await startSecurityApp();
    const diagram = (await journeyDiagrams()).find((d) => d.id === id)!;
    const proofFrom = new Map();
    const answers: Array<Record<string, unknown>> = [];
    for (const [i, replayed] of diagram.replayed.entries()) {
      const shown = exampleRequest(replayed, proofFrom);
      if (replayed.answer.proof) proofFrom.set(replayed.answer.proof.field, i + 1);
      const body: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(shown)) {
        const proof = typeof value === 'string' ? PROOF.exec(value) : null;
        if (proof) body[key] = answers[Number(proof[2]) - 1]![proof[1]!];
        // At 65 the request names no recipient: the code went to the phone on file, the newest message.
        else if (typeof value === 'string' && CODE.test(value)) body[key] = shown.phone ?? shown.email ? app.codeFor(String(shown.phone ?? shown.email)) : app.sandbox.outbox.list().find((m) => m.code)?.code;
        else body[key] = value;
      }
      const res = await app.post(replayed.action, body);
      expect({ request: i + 1, success: res.body.success, next_step: res.body.data?.next_step }).toEqual({ request: i + 1, success: true, next_step: replayed.answer.nextStep });
      answers.push(res.body.data as Record<string, unknown>);
    }
  });
});
