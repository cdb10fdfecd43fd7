import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatReplay, readRecordings, replayRecording } from '../../scripts/replay';
import type { RecordedJourney } from '../../src/flows/journey-recording';

/*
 * The committed recordings (test/fixtures/journeys, recorded from real sandbox runs by
 * scripts/record-journeys.ts) replayed against the login machine as it is today: each must
 * follow its recorded path. A bug report's recording becomes a test the same way:
 * `expect((await replayRecording(recording)).divergence).toBeUndefined()`.
 */

const DIR = join(__dirname, '..', 'fixtures', 'journeys');
const load = (file: string): RecordedJourney => JSON.parse(readFileSync(join(DIR, file), 'utf8')) as RecordedJourney;
const copy = (journey: RecordedJourney): RecordedJourney => JSON.parse(JSON.stringify(journey)) as RecordedJourney;

/** What each fixture is: the answer of every request, in order (a step, or the refusal's reason). */
const expected: Record<string, Array<number | string>> = {
  'phone-login.json': [14, 'invalid', 90],
  'phone-registration.json': [14, 24, 23, 25, 90],
  'email-login-with-phone.json': [33, 90],
  'email-login-add-phone.json': [33, 61, 62, 90],
  'email-login-unconfirmed-phone.json': [33, 65, 90],
  'email-login-phone-declined.json': [33, 65, 61, 62, 90],
  'email-registration-phone-profile.json': [23, 37, 90, 62, 90, 90],
};

describe('recorded journeys replay against the machine', () => {
  it('has a fixture for every journey, and nothing else', () => {
    expect(readdirSync(DIR).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.keys(expected))('%s follows its recorded path', async (file) => {
    const journey = load(file);
    const result = await replayRecording(journey);
    expect(result.divergence).toBeUndefined();
    expect(result.lines.map((l) => (l.answer.ok ? l.answer.step : l.answer.reason))).toEqual(expected[file]);
    // The replayed path is the recorded one, request by request.
    expect(result.lines.map((l) => l.steps)).toEqual(journey.requests.map((r) => r.steps));
    expect(result.lines.map((l) => l.resumed)).toEqual(journey.requests.map((r) => r.resumed));
    expect(formatReplay(result)).toMatch(/ok: the machine takes the recorded path/);
  });

  it('carries no code, proof or token: every secret is masked', () => {
    for (const file of Object.keys(expected)) {
      const text = readFileSync(join(DIR, file), 'utf8');
      expect(text).not.toMatch(/v1\.[A-Za-z0-9_-]{10,}/); // a proof
      expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/); // a token (JWT)
      expect(text).not.toMatch(/"\d{4,10}"/); // a code
      const journey = load(file);
      for (const request of journey.requests) {
        for (const field of ['otp_code', 'proof', 'phone_proof', 'pending_proof', 'register_proof']) {
          if (field in request.body) expect(request.body[field]).toBe('***');
        }
        if ('access_token' in request.answer.data) expect(request.answer.data.access_token).toBe('***');
      }
    }
  });
});

describe('a recording the machine no longer follows', () => {
  it('fails at the request and step where an answer step was changed', async () => {
    const journey = copy(load('email-login-with-phone.json'));
    journey.requests[1]!.answer.data.next_step = 61;
    const result = await replayRecording(journey);
    expect(result.divergence).toMatchObject({ request: 2, action: 'FeVerifyOtp', step: 90 });
    expect(result.divergence!.message).toBe(
      'the machine answers step 90 (flow email_with_phone); the recording answered step 61 (flow email_with_phone)',
    );
    expect(formatReplay(result)).toContain('DIVERGED at request 2 (FeVerifyOtp), step 90:');
  });

  it('names the first step that differs when an effect answered otherwise', async () => {
    // The account found by email had no phone: the machine goes to 61 where the recording went through 65 to 90.
    const journey = copy(load('email-login-with-phone.json'));
    const lookup = journey.requests[1]!.effects.find((e) => e.name === 'lookupUserByEmail')!;
    delete (lookup.output as Record<string, unknown>).phone;
    const result = await replayRecording(journey);
    expect(result.divergence).toMatchObject({ request: 2, action: 'FeVerifyOtp', step: 61 });
    expect(result.divergence!.message).toContain('passes step 61 where the recording passes 65');
    expect(result.lines).toHaveLength(2);
  });

  it('names an effect the machine calls where the recording called another', async () => {
    const journey = copy(load('phone-registration.json'));
    const register = journey.requests[4]!;
    register.effects = register.effects.filter((e) => e.name !== 'confirmDoi');
    const result = await replayRecording(journey);
    expect(result.divergence).toMatchObject({ request: 5, action: 'FeRegister', step: 36 });
    expect(result.divergence!.message).toBe('the machine called confirmDoi where the recording called updateProfile');
  });

  it('stops at the first divergence: later requests are not replayed', async () => {
    const journey = copy(load('email-registration-phone-profile.json'));
    journey.requests[2]!.answer.data.flow = 'email_register';
    const result = await replayRecording(journey);
    expect(result.divergence).toMatchObject({ request: 3, action: 'FeRegister', step: 90 });
    expect(result.lines).toHaveLength(3);
  });

  it('refuses a file that is not a recording', async () => {
    await expect(replayRecording({} as RecordedJourney)).rejects.toThrow(/not a recorded journey/);
  });
});

describe('npm run replay', () => {
  it('reads one journey, the GET /_sandbox/journeys envelope, or an array', () => {
    const journey = load('phone-login.json');
    expect(readRecordings(JSON.stringify(journey))).toEqual([journey]);
    expect(readRecordings(JSON.stringify({ success: true, error: null, data: journey }))).toEqual([journey]);
    expect(
      readRecordings(JSON.stringify({ success: true, error: null, data: { journeys: [journey, journey] } })),
    ).toHaveLength(2);
    expect(readRecordings(JSON.stringify([journey]))).toEqual([journey]);
  });

  it('prints the path of each file and exits 1 when one diverged', async () => {
    const tampered = copy(load('phone-login.json'));
    tampered.requests[2]!.answer.data.next_step = 24;
    const dir = mkdtempSync(join(tmpdir(), 'replay-'));
    writeFileSync(join(dir, 'bug.json'), JSON.stringify({ success: true, error: null, data: tampered }));
    const run = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        [
          require.resolve('tsx/cli'),
          join(__dirname, '..', '..', 'scripts', 'replay.ts'),
          '--',
          join(DIR, 'phone-login.json'),
          join(dir, 'bug.json'),
        ],
        { timeout: 30_000 },
        (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout }),
      );
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^ {3}1\. FeLogin +from enteringIdentifier +steps 13 → 14 +answer 14 \(phone\)$/m);
    expect(run.stdout).toMatch(/^ {3}2\. FeVerifyOtp +from awaitingPhoneCode +steps - +refused invalid$/m);
    expect(run.stdout).toContain('ok: the machine takes the recorded path (3 requests)');
    expect(run.stdout).toContain(
      'DIVERGED at request 3 (FeVerifyOtp), step 90: the machine answers step 90 (flow phone); the recording answered step 24 (flow phone)',
    );
  });
});
