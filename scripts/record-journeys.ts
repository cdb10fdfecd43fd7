import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/core/config/load';
import type { RecordedJourney } from '../src/flows/journey-recording';
import { startService } from '../src/service';

/*
 * `npx tsx scripts/record-journeys.ts`: re-records the committed journey fixtures
 * (test/fixtures/journeys/*.json) from real sandbox runs. It starts the service in-process on
 * the sandbox (as `npm start` does, on a free port), walks each journey below over HTTP as the
 * frontend would (codes read from GET /_sandbox/outbox?to=), and saves what
 * GET /_sandbox/journeys recorded for it. test/flows/replay.test.ts replays every fixture.
 */

export const FIXTURES_DIR = join(__dirname, '..', 'test', 'fixtures', 'journeys');

type Body = Record<string, unknown>;
type Data = Record<string, unknown>;

/** A client of a running service: Fe* calls and the outbox, as curl in the README does them. */
export function sandboxClient(baseUrl: string) {
  const read = new Map<string, number>();
  const fe = async (action: string, body: Body, expected?: { next_step?: unknown; reason?: string }): Promise<Data> => {
    const res = await fetch(`${baseUrl}/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const envelope = (await res.json()) as { success: boolean; data: Data };
    const got = envelope.success ? { next_step: envelope.data.next_step } : { reason: envelope.data.reason };
    if (expected && JSON.stringify({ ...got }) !== JSON.stringify(expected)) {
      throw new Error(
        `${action} ${JSON.stringify(body)} answered ${JSON.stringify(envelope)}, expected ${JSON.stringify(expected)}`,
      );
    }
    return envelope.data;
  };
  /** The code of the next message to `to` (a mail reaches the outbox a moment after the SMTP reply: polled). */
  const nextCode = async (to: string): Promise<string> => {
    const seen = read.get(to) ?? 0;
    for (let attempt = 0; attempt < 60; attempt++) {
      const res = await fetch(`${baseUrl}/_sandbox/outbox?to=${encodeURIComponent(to)}`);
      const { data } = (await res.json()) as { data: { code: string | null; messages: unknown[] } };
      if (data.messages.length > seen && data.code) {
        read.set(to, data.messages.length);
        return data.code;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no new code for ${to} in the outbox`);
  };
  const journeys = async (): Promise<RecordedJourney[]> => {
    const res = await fetch(`${baseUrl}/_sandbox/journeys`);
    return ((await res.json()) as { data: { journeys: RecordedJourney[] } }).data.journeys;
  };
  return { fe, nextCode, journeys };
}

export type SandboxClient = ReturnType<typeof sandboxClient>;

export interface Scenario {
  /** The fixture's file name (without .json) and the journey's name in it. */
  file: string;
  name: string;
  run(client: SandboxClient): Promise<void>;
}

const MARIO = { phone: '+393331234567', email: 'mario.rossi@example.com' };
const GIULIA = { email: 'giulia.bianchi@example.com' };
/** Accounts of a phone registration whose email was never confirmed: Elena's phone is hers, Francesca's is someone else's. */
const ELENA = { email: 'elena.neri@example.com', phone: '+393336660606' };
const FRANCESCA = { email: 'francesca.galli@example.com', phone: '+393336660707' };

/** The journeys committed as fixtures: each is one recorded journey. */
export const scenarios: Scenario[] = [
  {
    file: 'phone-login',
    name: 'Phone login (a wrong code first)',
    async run({ fe, nextCode }) {
      await fe('FeLogin', { identifier: '+39 333 123 4567' }, { next_step: 14 });
      const code = await nextCode(MARIO.phone);
      const wrong = code === '000000' ? '000001' : '000000';
      await fe('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: wrong }, { reason: 'invalid' });
      await fe('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: code }, { next_step: 90 });
    },
  },
  {
    file: 'phone-registration',
    name: 'Phone registration',
    async run({ fe, nextCode }) {
      const phone = '+393334440404';
      const email = 'paolo.gialli@example.com';
      await fe('FeLogin', { identifier: '+39 333 444 0404' }, { next_step: 14 });
      const verified = await fe(
        'FeVerifyOtp',
        { flow: 'phone', phone, otp_code: await nextCode(phone) },
        { next_step: 24 },
      );
      const emailSent = await fe(
        'FeRegister',
        { phase: 'email_otp', email, phone, otp: true, phone_proof: verified.phone_proof },
        { next_step: 23 },
      );
      const both = await fe(
        'FeVerifyOtp',
        {
          flow: 'phone_register',
          email,
          phone,
          otp_code: await nextCode(email),
          pending_proof: emailSent.pending_proof,
        },
        { next_step: 25 },
      );
      await fe(
        'FeRegister',
        {
          phase: 'register',
          email,
          phone,
          first_name: 'Paolo',
          last_name: 'Gialli',
          city: 'Torino',
          birth_date: '1988-03-02',
          consents: { terms_conditions: true },
          register_proof: both.register_proof,
        },
        { next_step: 90 },
      );
    },
  },
  {
    file: 'email-login-with-phone',
    name: 'Email login, the account has a phone',
    async run({ fe, nextCode }) {
      await fe('FeLogin', { identifier: MARIO.email }, { next_step: 33 });
      await fe(
        'FeVerifyOtp',
        { flow: 'email', email: MARIO.email, otp_code: await nextCode(MARIO.email) },
        { next_step: 90 },
      );
    },
  },
  {
    file: 'email-login-unconfirmed-phone',
    name: 'Email login, the email never confirmed: the phone on file proven at 65',
    async run({ fe, nextCode }) {
      await fe('FeLogin', { identifier: ELENA.email }, { next_step: 33 });
      const asked = await fe(
        'FeVerifyOtp',
        { flow: 'email', email: ELENA.email, otp_code: await nextCode(ELENA.email) },
        { next_step: 65 },
      );
      await fe(
        'FeVerifyOtp',
        { flow: 'email_with_phone', otp_code: await nextCode(ELENA.phone), pending_proof: asked.pending_proof },
        { next_step: 90 },
      );
    },
  },
  {
    file: 'email-login-phone-declined',
    name: 'Email login, the email never confirmed: «not my phone» at 65, then the owner’s own phone',
    async run({ fe, nextCode }) {
      const phone = '+393336660808';
      await fe('FeLogin', { identifier: FRANCESCA.email }, { next_step: 33 });
      const asked = await fe(
        'FeVerifyOtp',
        { flow: 'email', email: FRANCESCA.email, otp_code: await nextCode(FRANCESCA.email) },
        { next_step: 65 },
      );
      const declined = await fe(
        'FeVerifyOtp',
        { flow: 'email_phone_declined', pending_proof: asked.pending_proof },
        { next_step: 61 },
      );
      const uid = declined.uid;
      const added = await fe(
        'FeAddPhone',
        { flow: 'email_add_phone', phone, uid, email: FRANCESCA.email, proof: declined.proof },
        { next_step: 62 },
      );
      await fe(
        'FeVerifyOtp',
        {
          flow: 'email_add_phone',
          phone,
          uid,
          email: FRANCESCA.email,
          otp_code: await nextCode(phone),
          pending_proof: added.pending_proof,
        },
        { next_step: 90 },
      );
    },
  },
  {
    file: 'email-login-add-phone',
    name: 'Email login without a phone, then add one',
    async run({ fe, nextCode }) {
      const phone = '+393335550101';
      await fe('FeLogin', { identifier: GIULIA.email }, { next_step: 33 });
      const verified = await fe(
        'FeVerifyOtp',
        { flow: 'email', email: GIULIA.email, otp_code: await nextCode(GIULIA.email) },
        { next_step: 61 },
      );
      const uid = verified.uid;
      const added = await fe(
        'FeAddPhone',
        { flow: 'email_add_phone', phone: '+39 333 555 0101', uid, email: GIULIA.email, proof: verified.proof },
        { next_step: 62 },
      );
      await fe(
        'FeVerifyOtp',
        {
          flow: 'email_add_phone',
          phone,
          uid,
          email: GIULIA.email,
          otp_code: await nextCode(phone),
          pending_proof: added.pending_proof,
        },
        { next_step: 90 },
      );
    },
  },
  {
    file: 'email-registration-phone-profile',
    name: 'Email registration, then a phone and the profile',
    async run({ fe, nextCode }) {
      const email = 'sara.neri@example.com';
      const phone = '+393337770707';
      const sent = await fe('FeRegister', { phase: 'email_otp', email, otp: true }, { next_step: 23 });
      const verified = await fe(
        'FeVerifyOtp',
        { flow: 'email_register', email, otp_code: await nextCode(email), pending_proof: sent.pending_proof },
        { next_step: 37 },
      );
      const registered = await fe(
        'FeRegister',
        {
          phase: 'register',
          email,
          first_name: 'Sara',
          last_name: 'Neri',
          consents: { terms_conditions: true },
          register_proof: verified.register_proof,
        },
        { next_step: 90 },
      );
      const uid = registered.uid;
      const added = await fe(
        'FeAddPhone',
        { flow: 'email_register_phone', phone: '+39 333 777 0707', uid, email, proof: registered.proof },
        { next_step: 62 },
      );
      const phoneDone = await fe(
        'FeVerifyOtp',
        {
          flow: 'email_register_phone',
          phone,
          uid,
          email,
          otp_code: await nextCode(phone),
          pending_proof: added.pending_proof,
        },
        { next_step: 90 },
      );
      await fe(
        'FeUpdateProfile',
        { uid, city: 'Bologna', birth_date: '1992-06-15', proof: phoneDone.proof },
        { next_step: 90 },
      );
    },
  },
];

/** Runs one scenario and returns the one journey it recorded (anything else is an error: the grouping broke). */
export async function recordScenario(client: SandboxClient, scenario: Scenario): Promise<RecordedJourney> {
  const before = new Set((await client.journeys()).map((j) => j.id));
  await scenario.run(client);
  const added = (await client.journeys()).filter((j) => !before.has(j.id));
  if (added.length !== 1)
    throw new Error(
      `${scenario.file}: recorded ${added.length} journeys, expected 1: ${JSON.stringify(added.map((j) => j.requests.map((r) => r.action)))}`,
    );
  return { ...added[0]!, name: scenario.name };
}

async function main(): Promise<void> {
  const silent = pino({ level: 'silent' });
  const config = loadConfig({
    env: { NODE_ENV: 'development' },
    overrides: {
      sandbox: { enabled: true },
      server: { host: '127.0.0.1', port: 0 },
      log: { level: 'silent' },
      otp: { log_file: '' },
    },
  });
  const service = await startService(config, { log: silent, otpLog: silent });
  try {
    const client = sandboxClient(service.url);
    mkdirSync(FIXTURES_DIR, { recursive: true });
    for (const scenario of scenarios) {
      const journey = await recordScenario(client, scenario);
      const path = join(FIXTURES_DIR, `${scenario.file}.json`);
      writeFileSync(path, `${JSON.stringify(journey, null, 2)}\n`);
      process.stdout.write(`wrote ${path} (${journey.requests.length} requests)\n`);
    }
  } finally {
    await service.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
