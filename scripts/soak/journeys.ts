import { post, reasonOf, type Envelope } from './client';
import type { Fleet, Instance } from './fleet';
import type { PowSolver } from './solver';
import type { JourneyKind, Tally } from './tally';
import type { SoakOutbox } from './upstreams';

/*
 * Whole journeys through the Fe* actions, as the frontend makes them, each on fresh or
 * registered identities of its own so journeys never share a code. Codes are read from the
 * fakes' outbox. Each code that should log in is verified twice at once, on two instances:
 * exactly one may be accepted. A step that meets a fault (503 during the Redis outage, a
 * connection cut by the killed instance) is retried on the next instance, as a user presses
 * again; if the journey cannot go on after a fault it is "interrupted", not failed.
 * Each journey comes from an address of its own, as each person comes from theirs; a step asked
 * to solve the bot challenge (`challenge_required`) is solved, as the page's widget does, and
 * repeated with the solution: the journey counts as challenged.
 */

/** A step is retried through a fault at most this often, and for at most this long. */
const STEP_ATTEMPTS = 80;
const STEP_DEADLINE_MS = 30_000;
const FAULT_BACKOFF_MS = 250;
/** The instances run with otp.resend_cooldown_seconds = 1. */
const RESEND_COOLDOWN_MS = 1_000;

export interface Person {
  uid: string;
  email: string;
  phone: string;
}

class Stop extends Error {
  constructor(
    readonly why: string,
    readonly detail: string,
  ) {
    super(`${why}: ${detail}`);
  }
}

interface Journey {
  kind: JourneyKind;
  sawFault: boolean;
  /** The person's address, which the fleet forwards (the challenge's client signals count by it). */
  from: string;
  challenged: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dataOf = (envelope: Envelope) => envelope.data ?? {};
const wrongCode = (code: string) => `${code.slice(0, -1)}${(Number(code.at(-1)) + 1) % 10}`;

/** The order journeys are started in: logins outnumber registrations, as in production. */
const MIX: JourneyKind[] = [
  'phone_registration',
  'email_registration',
  'phone_login',
  'email_login',
  'wrong_code',
  'phone_login',
  'resend',
  'email_login',
  'phone_registration',
  'phone_login',
  'wrong_code',
  'email_login',
];

export class Journeys {
  private readonly people: Person[] = [];
  private serial = 0;
  private mixTurn = 0;
  private addresses = 0;
  /** Every answer that carried a token: each must reach the collector (uid and token). */
  readonly logins: Array<{ uid: string; token: string }> = [];

  constructor(
    private readonly tally: Tally,
    private readonly fleet: Fleet,
    private readonly outbox: SoakOutbox,
    private readonly solver: PowSolver,
  ) {}

  /** Runs one journey of the next kind in the mix, start to end; never throws. */
  async runNext(): Promise<void> {
    let kind = MIX[this.mixTurn++ % MIX.length]!;
    const person = kind.endsWith('registration') ? undefined : this.people.shift();
    if (!kind.endsWith('registration') && !person) kind = 'phone_registration';
    this.addresses += 1;
    const n = this.addresses;
    // Each on a /24 of its own (the low byte first): people come from many networks, and a /24 has a budget of its own (challenge.network_24).
    const journey: Journey = {
      kind,
      sawFault: false,
      from: `10.${n & 255}.${(n >> 8) & 255}.${(n >> 16) & 255}`,
      challenged: false,
    };
    this.tally.journeyStarted(kind);
    try {
      const registered = await this.run(journey, person);
      this.tally.journeyCompleted(kind);
      if (registered) this.people.push(registered);
    } catch (err) {
      if (journey.sawFault) this.tally.journeyInterrupted();
      else if (err instanceof Stop) this.tally.journeyFailed(kind, err.why, err.detail);
      else this.tally.journeyFailed(kind, 'error', (err as Error).message);
      // A person whose login was cut off logs in again later.
      if (person) this.people.push(person);
    }
  }

  private run(journey: Journey, person: Person | undefined): Promise<Person | undefined> {
    switch (journey.kind) {
      case 'phone_registration':
        return this.phoneRegistration(journey);
      case 'email_registration':
        return this.emailRegistration(journey);
      case 'phone_login':
        return this.phoneLogin(journey, person!).then(() => undefined);
      case 'email_login':
        return this.emailLogin(journey, person!, false).then(() => undefined);
      case 'wrong_code':
        return this.emailLogin(journey, person!, true).then(() => undefined);
      case 'resend':
        return this.resend(journey, person!).then(() => undefined);
    }
  }

  private fresh(): { phone: string; email: string } {
    this.serial += 1;
    return { phone: `+39333${String(this.serial).padStart(7, '0')}`, email: `soak.${this.serial}@example.com` };
  }

  /**
   * One action, retried through faults on the next instance. Answers the envelope, whether it
   * succeeded or not; `already_sent` (a resend met its cooldown) is waited out and retried, and
   * `challenge_required` solved and sent again with the solution.
   */
  private async call(
    journey: Journey,
    action: string,
    given: Record<string, unknown>,
    first?: Instance,
  ): Promise<Envelope> {
    let body = given;
    const deadline = Date.now() + STEP_DEADLINE_MS;
    let instance = first ?? this.fleet.next();
    for (let attempt = 1; attempt <= STEP_ATTEMPTS && Date.now() < deadline; attempt++) {
      const outcome = await post(this.tally, instance.url, action, body, journey.from);
      switch (outcome.kind) {
        case 'answer':
          if (reasonOf(outcome.envelope) === 'challenge_required' && dataOf(outcome.envelope).challenge) {
            body = { ...given, challenge: await this.solve(journey, dataOf(outcome.envelope).challenge) };
            break;
          }
          if (reasonOf(outcome.envelope) !== 'already_sent') return outcome.envelope;
          await sleep(Math.min(3_000, Number(dataOf(outcome.envelope).retry_after ?? 1) * 1000));
          break;
        case 'store_unavailable':
        case 'cut':
          journey.sawFault = true;
          await sleep(FAULT_BACKOFF_MS);
          break;
        case 'timeout':
          throw new Stop(`${action} timed out`, instance.name);
        case 'unexpected':
          throw new Stop(`${action} unexpected answer`, outcome.description);
      }
      instance = this.fleet.next();
    }
    throw new Stop(`${action} gave up`, `no answer after ${STEP_ATTEMPTS} attempts or ${STEP_DEADLINE_MS} ms`);
  }

  private async solve(journey: Journey, challenge: unknown): Promise<string> {
    if (!journey.challenged) this.tally.challenge.journeysChallenged += 1;
    journey.challenged = true;
    const solution = await this.solver.solve(challenge);
    this.tally.challenge.solved += 1;
    return solution;
  }

  /** `call`, which must succeed at one of `steps`. */
  private async step(
    journey: Journey,
    action: string,
    body: Record<string, unknown>,
    steps: number[],
  ): Promise<Record<string, unknown>> {
    return this.expect(action, await this.call(journey, action, body), steps);
  }

  private expect(action: string, envelope: Envelope, steps: number[]): Record<string, unknown> {
    const data = dataOf(envelope);
    if (!envelope.success) throw new Stop(`${action} refused ${reasonOf(envelope)}`, envelope.error ?? '');
    if (!steps.includes(Number(data.next_step)))
      throw new Stop(`${action} answered step ${String(data.next_step)}`, `expected ${steps.join(' or ')}`);
    this.noteToken(data);
    return data;
  }

  private noteToken(data: Record<string, unknown>): void {
    if (typeof data.access_token === 'string' && typeof data.uid === 'string')
      this.logins.push({ uid: data.uid, token: data.access_token });
  }

  /** The code a send just delivered to `to` (more than `seen` codes went there). */
  private async code(to: string, seen: number): Promise<string> {
    const code = await this.outbox.nextCode(to, seen);
    if (code === undefined) throw new Stop('no code arrived', to);
    return code;
  }

  /**
   * Verifies a right code on two instances at once: one answer may accept it, never both.
   * The journey goes on with the accepted answer.
   */
  private async verify(
    journey: Journey,
    body: Record<string, unknown>,
    steps: number[],
  ): Promise<Record<string, unknown>> {
    const first = this.fleet.next();
    const [main, probe] = await Promise.all([
      this.call(journey, 'FeVerifyOtp', body, first),
      post(this.tally, this.fleet.other(first).url, 'FeVerifyOtp', body, journey.from),
    ]);
    // The duplicate may have spent the code or proof before meeting the fault: the journey met it too.
    if (probe.kind === 'cut' || probe.kind === 'store_unavailable') journey.sawFault = true;
    const accepted = [main, probe.kind === 'answer' ? probe.envelope : undefined].filter(
      (e): e is Envelope => e?.success === true,
    );
    if (accepted.length === 0) return this.expect('FeVerifyOtp', main, steps);
    this.tally.codes.accepted += 1;
    if (accepted.length > 1) {
      this.tally.codes.doubleAccepted += 1;
      for (const extra of accepted.slice(1)) this.noteToken(dataOf(extra));
    }
    return this.expect('FeVerifyOtp', accepted[0]!, steps);
  }

  /** A code that must be refused (wrong, or replaced by a resend). */
  private async refuse(journey: Journey, body: Record<string, unknown>): Promise<void> {
    const envelope = await this.call(journey, 'FeVerifyOtp', body);
    if (envelope.success) {
      this.tally.codes.wrongAccepted += 1;
      this.noteToken(dataOf(envelope));
      throw new Stop('a wrong code was accepted', String(body.otp_code));
    }
    if (reasonOf(envelope) !== 'invalid')
      throw new Stop(`a wrong code answered ${reasonOf(envelope)}`, 'expected invalid');
  }

  private async phoneRegistration(journey: Journey): Promise<Person> {
    const { phone, email } = this.fresh();
    await this.step(journey, 'FeLogin', { identifier: phone }, [14]);
    const atPhone = await this.verify(journey, { flow: 'phone', phone, otp_code: await this.code(phone, 0) }, [24]);
    const atEmail = await this.step(
      journey,
      'FeRegister',
      {
        phase: 'email_otp',
        email,
        phone,
        otp: true,
        consents: { terms_conditions: true },
        flow: atPhone.flow,
        phone_proof: atPhone.phone_proof,
      },
      [23],
    );
    const verified = await this.verify(
      journey,
      { flow: atEmail.flow, email, otp_code: await this.code(email, 0), pending_proof: atEmail.pending_proof },
      [25],
    );
    const done = await this.step(
      journey,
      'FeRegister',
      {
        phase: 'register',
        email,
        first_name: 'Soak',
        last_name: `Phone ${this.serial}`,
        consents: { terms_conditions: true },
        flow: verified.flow,
        register_proof: verified.register_proof,
      },
      [90],
    );
    return { uid: String(done.uid), email, phone };
  }

  private async emailRegistration(journey: Journey): Promise<Person> {
    const { phone, email } = this.fresh();
    const atEmail = await this.step(
      journey,
      'FeRegister',
      { phase: 'email_otp', email, otp: true, consents: { terms_conditions: true } },
      [23],
    );
    const verified = await this.verify(
      journey,
      { flow: atEmail.flow, email, otp_code: await this.code(email, 0), pending_proof: atEmail.pending_proof },
      [37],
    );
    const registered = await this.step(
      journey,
      'FeRegister',
      {
        phase: 'register',
        email,
        first_name: 'Soak',
        last_name: `Email ${this.serial}`,
        consents: { terms_conditions: true },
        flow: verified.flow,
        register_proof: verified.register_proof,
      },
      [90],
    );
    const uid = String(registered.uid);
    const atPhone = await this.step(
      journey,
      'FeAddPhone',
      { flow: registered.flow, phone, uid, email, proof: registered.proof },
      [62],
    );
    await this.verify(
      journey,
      {
        flow: atPhone.flow,
        phone,
        uid,
        email,
        otp_code: await this.code(phone, 0),
        pending_proof: atPhone.pending_proof,
      },
      [90],
    );
    return { uid, email, phone };
  }

  private async phoneLogin(journey: Journey, person: Person): Promise<void> {
    const seen = this.outbox.codeCount(person.phone);
    await this.step(journey, 'FeLogin', { identifier: person.phone }, [14]);
    const done = await this.verify(
      journey,
      { flow: 'phone', phone: person.phone, otp_code: await this.code(person.phone, seen) },
      [90],
    );
    if (done.uid !== person.uid)
      throw new Stop('phone login reached another account', `${String(done.uid)} for ${person.uid}`);
  }

  private async emailLogin(journey: Journey, person: Person, wrongFirst: boolean): Promise<void> {
    const seen = this.outbox.codeCount(person.email);
    await this.step(journey, 'FeLogin', { identifier: person.email }, [33]);
    const code = await this.code(person.email, seen);
    if (wrongFirst) await this.refuse(journey, { flow: 'email', email: person.email, otp_code: wrongCode(code) });
    const done = await this.verify(journey, { flow: 'email', email: person.email, otp_code: code }, [90]);
    if (done.uid !== person.uid)
      throw new Stop('email login reached another account', `${String(done.uid)} for ${person.uid}`);
  }

  /** A phone login whose user asks for a new code: the replaced code is refused, the new one logs in. */
  private async resend(journey: Journey, person: Person): Promise<void> {
    const seen = this.outbox.codeCount(person.phone);
    await this.step(journey, 'FeLogin', { identifier: person.phone }, [14]);
    const replaced = await this.code(person.phone, seen);
    await sleep(RESEND_COOLDOWN_MS + 100);
    const seenBeforeResend = this.outbox.codeCount(person.phone);
    await this.step(journey, 'FeLogin', { identifier: person.phone }, [14]);
    const code = await this.code(person.phone, seenBeforeResend);
    if (code !== replaced) await this.refuse(journey, { flow: 'phone', phone: person.phone, otp_code: replaced });
    await this.verify(journey, { flow: 'phone', phone: person.phone, otp_code: code }, [90]);
  }

  /** Logins answered with a token whose ingest has not reached the collector. */
  lostIngests(): number {
    const expected = new Map<string, { uid: string; token: string; count: number }>();
    for (const { uid, token } of this.logins) {
      const key = `${uid} ${token.slice(-4)}`;
      const entry = expected.get(key) ?? { uid, token, count: 0 };
      entry.count += 1;
      expected.set(key, entry);
    }
    let lost = 0;
    for (const { uid, token, count } of expected.values())
      lost += Math.max(0, count - this.outbox.ingestsOf(uid, token));
    return lost;
  }
}
