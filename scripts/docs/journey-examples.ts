import pino from 'pino';
import {
  ACTION_ENTRY,
  EXAMPLE_JOURNEY_IDS,
  journeyDiagrams,
  proofFieldFor,
  type FeAction,
  type JourneyId,
} from '../../machines';
import { loadConfig } from '../../src/core/config/load';
import {
  codePlaceholder,
  proofReference,
  type ExamplePerson,
  type ExampleExchange,
  type JourneyExample,
} from '../../src/http/demo/flow-examples';
import { sandboxSeedUsers, sandboxUidFor } from '../../src/sandbox/identity';
import { startService } from '../../src/service';
import { sandboxClient } from '../record-journeys';
import { SoftAuthenticator } from '../../test/support/soft-authenticator';
import type { DocGenerator } from './generator';

/*
 * docs/journeys/examples.json: each journey of /flows and docs/journeys.md walked by one person in
 * the sandbox, over HTTP as a frontend does (the service started in-process, as `npm start` runs
 * it; POST /_sandbox/reset before each journey, codes read from GET /_sandbox/outbox). Mario logs
 * in, Giulia adds a phone, Elena proves hers, Francesca declines the one on her account, and three
 * newcomers register: every phone, email, uid, proof and token of a journey's examples is that
 * person's (test/sandbox/flows-examples.test.ts replays them and checks). What changes on every
 * run (codes, proofs, tokens) is recorded as what it stands for, so the file is the same on every
 * run and `npm run docs` can check it.
 */

/** A code the person received: the request sends the code that went to `to`. */
interface Code {
  code: string;
}
const codeTo = (to: string): Code => ({ code: to });
const isCode = (value: unknown): value is Code => typeof value === 'object' && value !== null && 'code' in value;

/** Where the person's browser signs a passkey assertion: the walk asks PasskeyLoginOptions and answers its challenge. */
const ASSERTION = { assertion: true } as const;
const isAssertion = (value: unknown) => typeof value === 'object' && value !== null && 'assertion' in value;
/** How the examples show the ceremony's two fields: what they are, since each is good for one challenge only. */
const PASSKEY_PROOF_SHOWN = '‹la passkey_proof della risposta di PasskeyLoginOptions›';
const ASSERTION_SHOWN = '‹l’asserzione che il browser firma con la passkey (startAuthentication)›';
/** Where the person's browser creates a passkey: the walk answers the options PasskeyEnrolOptions just gave. */
const REGISTRATION = { registration: true } as const;
const isRegistration = (value: unknown) => typeof value === 'object' && value !== null && 'registration' in value;
const ENROL_PROOF_SHOWN = '‹la passkey_proof della risposta di PasskeyEnrolOptions›';
const REGISTRATION_SHOWN = '‹la nuova credenziale che il browser crea con la passkey (startRegistration)›';
/** An enrolment's answers, by what they are: a challenge, a user handle and a passkey id are new each time. */
const CEREMONY_SHOWN: Record<string, string> = {
  options: '‹le opzioni di creazione della passkey (PublicKeyCredentialCreationOptions)›',
  passkey_proof: '‹la passkey_proof che lega la sfida a questo account e a questa prova di accesso›',
  passkey: '‹la passkey salvata: id, name, created_at, last_used_at, device_type, backed_up›',
};
/** The origin the examples' passkeys are bound to (passkeys.origins of the walk's service). */
const EXAMPLES_PASSKEY_ORIGIN = 'http://localhost:8080';

interface Walk {
  id: JourneyId;
  person: Omit<ExamplePerson, 'uid'> & { uid?: string };
  /** The bodies the frontend sends, a code where the person types one; proofs are attached as the frontend does. */
  requests: Array<{ action: FeAction; body: Record<string, unknown> }>;
  /** Before the journey, not shown: the person enrols a passkey after a code login (the passkey journey). */
  enrolsPasskey?: { phone: string };
}

const seeded = (email: string) => {
  const user = sandboxSeedUsers.find((u) => u.email === email);
  if (!user) throw new Error(`journey examples: no seeded person ${email}`);
  return {
    name: `${user.first_name} ${user.last_name}`,
    uid: user.uid,
    email: user.email,
    phone: user.custom.otp_phone ? `+${user.custom.otp_phone}` : undefined,
  };
};
const MARIO = seeded('mario.rossi@example.com');
const GIULIA = seeded('giulia.bianchi@example.com');
const ELENA = seeded('elena.neri@example.com');
const FRANCESCA = seeded('francesca.galli@example.com');
/** The phones the journeys add, and the newcomers. */
const GIULIA_NEW_PHONE = '+393335550101';
const FRANCESCA_OWN_PHONE = '+393336660808';
const PAOLO = { name: 'Paolo Gialli', email: 'paolo.gialli@example.com', phone: '+393334440404' };
const SARA = { name: 'Sara Neri', email: 'sara.neri@example.com', phone: '+393337770707' };
const DARIO = { name: 'Dario Bianchi', email: 'dario.bianchi@example.com' };

/** One walk per journey of machines/diagrams/journeys.ts, the same requests, by the sandbox's people. */
const EXAMPLE_WALKS: Walk[] = [
  {
    id: 'phone-login',
    person: { name: MARIO.name, uid: MARIO.uid, email: MARIO.email, phones: [MARIO.phone!] },
    requests: [
      { action: 'FeLogin', body: { identifier: MARIO.phone } },
      { action: 'FeVerifyOtp', body: { flow: 'phone', phone: MARIO.phone, otp_code: codeTo(MARIO.phone!) } },
    ],
  },
  {
    id: 'phone-registration',
    person: { name: PAOLO.name, email: PAOLO.email, phones: [PAOLO.phone] },
    requests: [
      { action: 'FeLogin', body: { identifier: PAOLO.phone } },
      { action: 'FeVerifyOtp', body: { flow: 'phone', phone: PAOLO.phone, otp_code: codeTo(PAOLO.phone) } },
      { action: 'FeRegister', body: { phase: 'email_otp', email: PAOLO.email, phone: PAOLO.phone, otp: true } },
      {
        action: 'FeVerifyOtp',
        body: { flow: 'phone_register', email: PAOLO.email, phone: PAOLO.phone, otp_code: codeTo(PAOLO.email) },
      },
      {
        action: 'FeRegister',
        body: {
          phase: 'register',
          email: PAOLO.email,
          phone: PAOLO.phone,
          first_name: 'Paolo',
          last_name: 'Gialli',
          city: 'Torino',
          birth_date: '1988-03-02',
          consents: { terms_conditions: true },
        },
      },
    ],
  },
  {
    id: 'email-registration',
    person: { name: SARA.name, email: SARA.email, phones: [SARA.phone] },
    requests: [
      { action: 'FeLogin', body: { identifier: SARA.email } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: SARA.email, otp_code: codeTo(SARA.email) } },
      {
        action: 'FeRegister',
        body: {
          phase: 'register',
          email: SARA.email,
          first_name: 'Sara',
          last_name: 'Neri',
          consents: { terms_conditions: true },
        },
      },
      {
        action: 'FeAddPhone',
        body: { flow: 'email_register_phone', phone: SARA.phone, uid: sandboxUidFor(SARA.email), email: SARA.email },
      },
      {
        action: 'FeVerifyOtp',
        body: {
          flow: 'email_register_phone',
          phone: SARA.phone,
          uid: sandboxUidFor(SARA.email),
          email: SARA.email,
          otp_code: codeTo(SARA.phone),
        },
      },
      {
        action: 'FeUpdateProfile',
        body: { uid: sandboxUidFor(SARA.email), city: 'Bologna', birth_date: '1992-06-15' },
      },
    ],
  },
  {
    id: 'email-login-with-phone',
    person: { name: MARIO.name, uid: MARIO.uid, email: MARIO.email, phones: [MARIO.phone!] },
    requests: [
      { action: 'FeLogin', body: { identifier: MARIO.email } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: MARIO.email, otp_code: codeTo(MARIO.email) } },
    ],
  },
  {
    id: 'email-login-unconfirmed-phone',
    person: { name: ELENA.name, uid: ELENA.uid, email: ELENA.email, phones: [ELENA.phone!] },
    requests: [
      { action: 'FeLogin', body: { identifier: ELENA.email } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: ELENA.email, otp_code: codeTo(ELENA.email) } },
      { action: 'FeVerifyOtp', body: { flow: 'email_with_phone', otp_code: codeTo(ELENA.phone!) } },
    ],
  },
  {
    id: 'email-login-phone-declined',
    // The phone on her account is someone else's (she declines it at 65); the one she adds is hers.
    person: {
      name: FRANCESCA.name,
      uid: FRANCESCA.uid,
      email: FRANCESCA.email,
      phones: [FRANCESCA.phone!, FRANCESCA_OWN_PHONE],
    },
    requests: [
      { action: 'FeLogin', body: { identifier: FRANCESCA.email } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: FRANCESCA.email, otp_code: codeTo(FRANCESCA.email) } },
      { action: 'FeVerifyOtp', body: { flow: 'email_phone_declined' } },
      {
        action: 'FeAddPhone',
        body: { flow: 'email_add_phone', phone: FRANCESCA_OWN_PHONE, uid: FRANCESCA.uid, email: FRANCESCA.email },
      },
      {
        action: 'FeVerifyOtp',
        body: {
          flow: 'email_add_phone',
          phone: FRANCESCA_OWN_PHONE,
          uid: FRANCESCA.uid,
          email: FRANCESCA.email,
          otp_code: codeTo(FRANCESCA_OWN_PHONE),
        },
      },
    ],
  },
  {
    id: 'email-login-add-phone',
    person: { name: GIULIA.name, uid: GIULIA.uid, email: GIULIA.email, phones: [GIULIA_NEW_PHONE] },
    requests: [
      { action: 'FeLogin', body: { identifier: GIULIA.email } },
      { action: 'FeVerifyOtp', body: { flow: 'email', email: GIULIA.email, otp_code: codeTo(GIULIA.email) } },
      {
        action: 'FeAddPhone',
        body: { flow: 'email_add_phone', phone: GIULIA_NEW_PHONE, uid: GIULIA.uid, email: GIULIA.email },
      },
      {
        action: 'FeVerifyOtp',
        body: {
          flow: 'email_add_phone',
          phone: GIULIA_NEW_PHONE,
          uid: GIULIA.uid,
          email: GIULIA.email,
          otp_code: codeTo(GIULIA_NEW_PHONE),
        },
      },
    ],
  },
  {
    id: 'email-signup',
    person: { name: DARIO.name, email: DARIO.email, phones: [] },
    requests: [
      { action: 'FeRegister', body: { phase: 'email_otp', email: DARIO.email, otp: true } },
      { action: 'FeVerifyOtp', body: { flow: 'email_register', email: DARIO.email, otp_code: codeTo(DARIO.email) } },
      {
        action: 'FeRegister',
        body: {
          phase: 'register',
          email: DARIO.email,
          first_name: 'Dario',
          last_name: 'Bianchi',
          consents: { terms_conditions: true },
        },
      },
    ],
  },
  {
    id: 'password',
    person: { name: GIULIA.name, uid: GIULIA.uid, email: GIULIA.email, phones: [] },
    requests: [{ action: 'FeLogin', body: { identifier: GIULIA.email, method: 'password' } }],
  },
  {
    id: 'passkey-login',
    person: { name: MARIO.name, uid: MARIO.uid, email: MARIO.email, phones: [MARIO.phone!] },
    enrolsPasskey: { phone: MARIO.phone! },
    requests: [{ action: 'PasskeyLogin', body: { credential: ASSERTION } }],
  },
  {
    id: 'passkey-enrol',
    person: { name: MARIO.name, uid: MARIO.uid, email: MARIO.email, phones: [MARIO.phone!] },
    requests: [
      { action: 'FeLogin', body: { identifier: MARIO.phone } },
      { action: 'FeVerifyOtp', body: { flow: 'phone', phone: MARIO.phone, otp_code: codeTo(MARIO.phone!) } },
      { action: 'PasskeyEnrolOptions', body: {} },
      { action: 'PasskeyEnrol', body: { credential: REGISTRATION, name: 'Passkey' } },
    ],
  },
];

const PROOF_FIELDS = ['proof', 'phone_proof', 'pending_proof', 'register_proof'] as const;
const TOKEN_FIELDS = ['access_token', 'refresh_token', 'id_token'] as const;
/** What a proof or token carries that changes on every run, left out of what it is shown by. */
// Made anew at each walk (the funnel's anonymous journey id among them, and its trail beside it): an example shows what a proof binds.
const RANDOM_CLAIMS = new Set(['jti', 'iat', 'exp', 'nbf', 'shown', 'journey', 'trail']);

/** The claims of a signed proof (`v1.<claims>.<mac>`) or a JWT (`<header>.<claims>.<signature>`); undefined when unreadable. */
export function readableClaims(signed: unknown): Record<string, unknown> | undefined {
  if (typeof signed !== 'string') return undefined;
  const part = signed.split('.')[1];
  if (part === undefined) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const bound = (claims: Record<string, unknown>, leave: string[]) =>
  Object.entries(claims)
    .filter(([key, value]) => value !== undefined && !RANDOM_CLAIMS.has(key) && !leave.includes(key))
    .map(
      ([key, value]) =>
        `${key} ${Array.isArray(value) ? value.join('/') : typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
    )
    .join(', ');

/** A proof in an answer, shown by what it binds. */
function proofPlaceholder(proof: unknown): string {
  const claims = readableClaims(proof);
  if (!claims) throw new Error('journey examples: a proof whose claims cannot be read');
  return `‹prova firmata: ${String(claims.kind)}; ${bound(claims, ['kind'])}›`;
}

/** A token in an answer, shown by its subject. */
function tokenPlaceholder(token: unknown): string {
  const claims = readableClaims(token);
  return claims ? `‹token firmato: ${bound(claims, ['iss', 'aud'])}›` : '‹token›';
}

/** The answer as the examples show it: proofs and tokens by what they stand for. */
export function exampleAnswer(envelope: ExampleExchange['answer']): ExampleExchange['answer'] {
  const data: Record<string, unknown> = { ...envelope.data };
  for (const [field, shown] of Object.entries(CEREMONY_SHOWN)) if (data[field] !== undefined) data[field] = shown;
  for (const field of PROOF_FIELDS) if (typeof data[field] === 'string') data[field] = proofPlaceholder(data[field]);
  for (const field of TOKEN_FIELDS) if (typeof data[field] === 'string') data[field] = tokenPlaceholder(data[field]);
  return { success: envelope.success, error: envelope.error, data };
}

/** A client of a running sandbox: POST an action, the newest code to an address (the recorder's), reset. */
export function examplesClient(baseUrl: string) {
  // What the outbox held is forgotten with it: a fresh reader after each reset.
  let outbox = sandboxClient(baseUrl);
  return {
    async post(action: string, body: Record<string, unknown>): Promise<ExampleExchange['answer']> {
      const res = await fetch(`${baseUrl}/${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as ExampleExchange['answer'];
    },
    code: (to: string): Promise<string> => outbox.nextCode(to),
    async reset(): Promise<void> {
      const res = await fetch(`${baseUrl}/_sandbox/reset`, { method: 'POST' });
      if (!res.ok) throw new Error(`journey examples: POST /_sandbox/reset answered ${res.status}`);
      outbox = sandboxClient(baseUrl);
    },
  };
}

/** Walks one journey from a reset sandbox and records it as the examples show it. */
async function recordWalk(client: ReturnType<typeof examplesClient>, walk: Walk): Promise<JourneyExample> {
  await client.reset();
  const authenticator = walk.enrolsPasskey ? await enrolPasskey(client, walk.enrolsPasskey.phone) : undefined;
  const handedOut = new Map<string, { value: unknown; answer: number }>();
  const requests: ExampleExchange[] = [];
  let uid = walk.person.uid;
  /** The latest enrolment options answered: the passkey the browser creates answers them. */
  let offered: { options: unknown; passkey_proof: unknown } | undefined;
  for (const [i, { action, body }] of walk.requests.entries()) {
    const shown: Record<string, unknown> = {};
    const sent: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      if (isAssertion(value)) {
        if (!authenticator) throw new Error(`journey examples: ${walk.id} signs an assertion without a passkey`);
        const asked = await client.post('PasskeyLoginOptions', {});
        sent.passkey_proof = asked.data.passkey_proof;
        sent[key] = authenticator.assert(asked.data.options as { challenge: string; rpId?: string });
        shown.passkey_proof = PASSKEY_PROOF_SHOWN;
        shown[key] = ASSERTION_SHOWN;
        continue;
      }
      if (isRegistration(value)) {
        if (!offered) throw new Error(`journey examples: ${walk.id} creates a passkey no options were asked for`);
        sent.passkey_proof = offered.passkey_proof;
        sent[key] = new SoftAuthenticator(EXAMPLES_PASSKEY_ORIGIN).register(
          offered.options as { challenge: string; rp: { id?: string }; user: { id: string } },
        );
        shown.passkey_proof = ENROL_PROOF_SHOWN;
        shown[key] = REGISTRATION_SHOWN;
        continue;
      }
      shown[key] = isCode(value) ? codePlaceholder(value.code) : value;
      sent[key] = isCode(value) ? await client.code(value.code) : value;
    }
    // The proof the frontend sends on: the one the latest answer handed out in the field the action reads.
    const field = proofFieldFor(ACTION_ENTRY[action], body);
    const proof = field ? handedOut.get(field) : undefined;
    if (field && proof) {
      shown[field] = proofReference(field, proof.answer);
      sent[field] = proof.value;
    }
    const answer = await client.post(action, sent);
    if (!answer.success)
      throw new Error(
        `journey examples: ${walk.id} request ${i + 1} (${action}) was refused: ${JSON.stringify(answer)}`,
      );
    for (const key of Object.keys(answer.data))
      if ((PROOF_FIELDS as readonly string[]).includes(key))
        handedOut.set(key, { value: answer.data[key], answer: i + 1 });
    if (typeof answer.data.uid === 'string') uid ??= answer.data.uid;
    if (answer.data.options !== undefined)
      offered = { options: answer.data.options, passkey_proof: answer.data.passkey_proof };
    requests.push({ action, body: shown, answer: exampleAnswer(answer) });
  }
  if (uid === undefined) throw new Error(`journey examples: ${walk.id} never names the person's uid`);
  return { id: walk.id, person: { ...walk.person, uid }, requests };
}

/** A phone login by SMS code, then a passkey enrolled with its proof: the authenticator that holds it. */
async function enrolPasskey(client: ReturnType<typeof examplesClient>, phone: string): Promise<SoftAuthenticator> {
  await client.post('FeLogin', { identifier: phone });
  const verified = await client.post('FeVerifyOtp', { flow: 'phone', phone, otp_code: await client.code(phone) });
  const proof = verified.data.proof;
  const asked = await client.post('PasskeyEnrolOptions', { proof });
  const authenticator = new SoftAuthenticator(EXAMPLES_PASSKEY_ORIGIN);
  const credential = authenticator.register(
    asked.data.options as { challenge: string; rp: { id?: string }; user: { id: string } },
  );
  const enrolled = await client.post('PasskeyEnrol', { proof, passkey_proof: asked.data.passkey_proof, credential });
  if (!enrolled.success) throw new Error(`journey examples: the passkey was not enrolled: ${JSON.stringify(enrolled)}`);
  return authenticator;
}

/** Every journey's examples, walked in a sandbox started for them; each answer checked against the journey's diagram. */
async function recordJourneyExamples(): Promise<JourneyExample[]> {
  const silent = pino({ level: 'silent' });
  const config = loadConfig({
    env: { NODE_ENV: 'development' },
    overrides: {
      sandbox: { enabled: true },
      server: { host: '127.0.0.1', port: 0 },
      log: { level: 'silent' },
      otp: { log_file: '' },
      // The passkey journey's walk: passkeys in memory, bound to the origin its authenticator signs for.
      passkeys: { enabled: true, rp_id: 'localhost', origins: [EXAMPLES_PASSKEY_ORIGIN] },
    },
  });
  const service = await startService(config, { log: silent, otpLog: silent });
  try {
    return await walkEveryJourney(service.url, { passkeys: true });
  } finally {
    await service.close();
  }
}

/**
 * Every journey walked by its person on a running sandboxed service (`baseUrl`), each answer
 * checked against the journey's diagram: the examples, and any test that needs every journey
 * driven with known people (the traces' scan for personal data).
 */
export async function walkEveryJourney(
  baseUrl: string,
  options: { passkeys?: boolean } = {},
): Promise<JourneyExample[]> {
  const client = examplesClient(baseUrl);
  const diagrams = await journeyDiagrams();
  const examples: JourneyExample[] = [];
  // The passkey journeys need passkeys on, bound to EXAMPLES_PASSKEY_ORIGIN: walked only where the caller says so.
  const walked = diagrams.filter((d) => options.passkeys === true || EXAMPLE_JOURNEY_IDS.includes(d.id));
  for (const diagram of walked) {
    const walk = EXAMPLE_WALKS.find((w) => w.id === diagram.id);
    if (!walk) throw new Error(`journey examples: no walk for ${diagram.id}`);
    const example = await recordWalk(client, walk);
    // The examples are of the journey the diagram draws: the same actions, the same steps.
    const drawn = diagram.replayed.map((r) => `${r.action} → ${r.answer.nextStep}`);
    // An enrolment's answers name no step (they answer their ceremony): their action is what is compared.
    const walked = example.requests.map(
      (r, i) => `${r.action} → ${String(r.answer.data.next_step ?? diagram.replayed[i]?.answer.nextStep)}`,
    );
    if (drawn.join(', ') !== walked.join(', '))
      throw new Error(
        `journey examples: ${diagram.id} walked ${walked.join(', ')} where its diagram draws ${drawn.join(', ')}`,
      );
    examples.push(example);
  }
  return examples;
}

let recorded: Promise<JourneyExample[]> | undefined;
/** The examples, walked once per process. */
export const journeyExamplesOnce = () => (recorded ??= recordJourneyExamples());

export const journeyExamplesDoc: DocGenerator = {
  path: 'docs/journeys/examples.json',
  render: async () =>
    `${JSON.stringify(
      {
        generated:
          'Generated by `npm run docs` from one person walking each journey in the sandbox (scripts/docs/journey-examples.ts). Do not edit by hand.',
        journeys: await journeyExamplesOnce(),
      },
      null,
      2,
    )}\n`,
};
