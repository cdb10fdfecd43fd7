import pino from 'pino';
import { EXAMPLE_JOURNEY_IDS, JOURNEY_IDS, journeyDiagrams } from '../../machines';
import { examplesClient, exampleAnswer, readableClaims } from '../../scripts/docs/journey-examples';
import {
  CODE_PLACEHOLDER,
  PROOF_REFERENCE,
  journeyExamples,
  type ExampleExchange,
  type JourneyExample,
} from '../../src/http/demo/flow-examples';
import { sandboxSeedUsers, sandboxUidFor } from '../../src/sandbox/identity';
import { startService, type Service } from '../../src/service';
import { testConfig } from '../support/app';

/*
 * The examples /flows and docs/journeys.md show (docs/journeys/examples.json) replay verbatim
 * against the sandbox, as `npm start` runs it: after POST /_sandbox/reset, each example request
 * is POSTed in order, with the code the outbox shows for the address the example names and the
 * proof of the answer it names; every answer is the example's. And each journey is one person's:
 * every phone, email and uid in its requests and answers, and in the claims of the proofs and
 * tokens the service handed out on the way, is that person's.
 */

const examples = journeyExamples();
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const PHONE = /\+\d{8,15}\b/g;
const UID = /\bPNI[\w-]{11}\b/g;

/** The identifiers in `text` (and in the claims given) that are not the person's. */
function foreignIdentifiers(
  example: JourneyExample,
  text: string,
  claims: Array<Record<string, unknown>> = [],
): string[] {
  const { person } = example;
  const found = [
    ...[...text.matchAll(EMAIL)].map((m) => m[0].toLowerCase()).filter((e) => e !== person.email),
    ...[...text.matchAll(PHONE)].map((m) => m[0]).filter((p) => !person.phones.includes(p)),
    ...[...text.matchAll(UID)].map((m) => m[0]).filter((u) => u !== person.uid),
  ];
  for (const c of claims) {
    for (const key of ['uid', 'sub'] as const)
      if (typeof c[key] === 'string' && c[key] !== person.uid) found.push(`${key} ${String(c[key])}`);
    if (typeof c.email === 'string' && c.email.toLowerCase() !== person.email) found.push(`email ${c.email}`);
    if (typeof c.phone === 'string' && !person.phones.includes(c.phone)) found.push(`phone ${c.phone}`);
  }
  return found;
}

/** The proofs and tokens of a live answer, readable. */
const signedClaims = (data: Record<string, unknown>) =>
  ['proof', 'phone_proof', 'pending_proof', 'register_proof', 'access_token', 'refresh_token']
    .map((f) => readableClaims(data[f]))
    .filter((c): c is Record<string, unknown> => c !== undefined);

describe('the /flows examples, replayed verbatim against the sandbox', () => {
  let service: Service;
  beforeAll(async () => {
    service = await startService(testConfig({ sandbox: { enabled: true }, server: { host: '127.0.0.1', port: 0 } }), {
      log: pino({ level: 'silent' }),
      otpLog: pino({ level: 'silent' }),
    });
  }, 30_000);
  afterAll(async () => {
    await service?.close();
  });

  it('has one recorded person per journey, and a seeded person is the seed', () => {
    expect([...examples.keys()].sort()).toEqual([...JOURNEY_IDS].sort());
    for (const example of examples.values()) {
      const seed = sandboxSeedUsers.find((u) => u.email === example.person.email);
      // A seeded person is that seed; anyone else is the person the journey registers, with the uid the sandbox gives their email.
      expect({ id: example.id, uid: example.person.uid }).toEqual({
        id: example.id,
        uid: seed ? seed.uid : sandboxUidFor(example.person.email),
      });
    }
  });

  it.each([...EXAMPLE_JOURNEY_IDS])(
    '%s: each request, sent as shown, is answered as shown, and names only its person',
    async (id) => {
      const example = examples.get(id)!;
      const diagram = (await journeyDiagrams()).find((d) => d.id === id)!;
      expect(example.requests.map((r) => r.action)).toEqual(diagram.replayed.map((r) => r.action));
      const client = examplesClient(service.url);
      await client.reset();
      const answers: Array<ExampleExchange['answer']> = [];
      const claims: Array<Record<string, unknown>> = [];
      for (const [i, shown] of example.requests.entries()) {
        const body: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(shown.body)) {
          const code = typeof value === 'string' ? CODE_PLACEHOLDER.exec(value) : null;
          const proof = typeof value === 'string' ? PROOF_REFERENCE.exec(value) : null;
          if (code) body[key] = await client.code(code[1]!);
          else if (proof) body[key] = answers[Number(proof[2]) - 1]!.data[proof[1]!];
          else body[key] = value;
          if (proof) expect(body[key]).toEqual(expect.any(String));
        }
        const answer = await client.post(shown.action, body);
        expect({ request: i + 1, answer: exampleAnswer(answer) }).toEqual({ request: i + 1, answer: shown.answer });
        expect(answer.data.next_step).toBe(diagram.replayed[i]!.answer.nextStep);
        answers.push(answer);
        claims.push(...signedClaims(answer.data));
      }
      // Every code went to the person, every proof and token binds the person, and nothing shown names anyone else.
      const codesTo = example.requests
        .flatMap((r) =>
          Object.values(r.body).flatMap((v) => (typeof v === 'string' ? [CODE_PLACEHOLDER.exec(v)?.[1]] : [])),
        )
        .filter((t): t is string => t !== undefined);
      expect(codesTo.every((to) => to === example.person.email || example.person.phones.includes(to))).toBe(true);
      // Every proof and token handed out was read (the examples show each by its claims).
      expect(claims).toHaveLength(
        (JSON.stringify(example.requests.map((r) => r.answer)).match(/‹(?:prova|token) firmat[ao]/g) ?? []).length,
      );
      expect(foreignIdentifiers(example, JSON.stringify(example), claims)).toEqual([]);
    },
    30_000,
  );

  it('catches an example that pairs one person’s uid with another’s proof or token', () => {
    const mario = examples.get('phone-login')!;
    const giulia = sandboxSeedUsers[1]!;
    const tampered = JSON.parse(
      JSON.stringify(mario).replace(/sub PNIa7Xk2mR0ssi/, `sub ${giulia.uid}`),
    ) as JourneyExample;
    expect(foreignIdentifiers(tampered, JSON.stringify(tampered))).toEqual([giulia.uid]);
    expect(
      foreignIdentifiers(mario, JSON.stringify(mario), [
        { kind: 'verified', uid: mario.person.uid, email: giulia.email },
      ]),
    ).toEqual([`email ${giulia.email}`]);
    expect(foreignIdentifiers(mario, '{"phone":"+393335550101"}')).toEqual(['+393335550101']);
  });
});
