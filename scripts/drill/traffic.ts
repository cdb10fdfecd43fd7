import type { Service } from '../../src/service';

/*
 * The people and the bots of the drill, against one service on its sandbox. Each person comes
 * from an address of their own (the drill's service trusts one proxy hop), so the per-client
 * limits and the challenge's client signals see many people, as in production.
 */

/** Prefixes of Italian mobile operators (libphonenumber's mobile ranges). */
const MOBILE_PREFIXES = ['320', '328', '333', '338', '340', '347', '349', '366', '380', '389'];

export interface Answer {
  success: boolean;
  data: Record<string, unknown> | null;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Client {
  private people = 0;

  constructor(
    readonly service: Service,
    /** Keeps the numbers and addresses of two drills on one sandbox apart. */
    private readonly lane: number,
  ) {}

  /**
   * A new Italian mobile number; `range` picks its first digits after +39 (a number range of the
   * pumping defence). Without one, people spread over ten operators' prefixes, as real traffic does.
   */
  phone(range?: string): string {
    this.people += 1;
    const head = `${range ?? MOBILE_PREFIXES[this.people % MOBILE_PREFIXES.length]}${this.lane % 10}`;
    return `+39${head}${String(this.people).padStart(10 - head.length, '0')}`.slice(0, 13);
  }

  /** A new client address. */
  address(): string {
    this.people += 1;
    const n = this.people;
    return `10.${this.lane % 250}.${(n >> 8) & 255}.${n & 255}`;
  }

  async post(action: string, body: Record<string, unknown>, address = this.address()): Promise<Answer> {
    const res = await fetch(`${this.service.url}/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify(body),
    });
    return (await res.json()) as Answer;
  }

  /** The newest code sent to `to` since `since` (ms), waiting for it a little: undefined when none came. */
  async code(to: string, since: number, waitMs = 1500): Promise<string | undefined> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      // Newest first; a code from before the request is someone else's moment, never this one's.
      const newest = this.service.sandbox!.outbox.to(to)[0];
      const found = newest && Date.parse(newest.at) >= since ? newest.code : undefined;
      if (found || Date.now() > deadline) return found;
      await pause(50);
    }
  }

  /** POST <sandbox>/faults/<path>: a fault switch of the fakes. */
  async fault(path: string): Promise<void> {
    const res = await fetch(`${this.service.sandbox!.baseUrl}/faults/${path}`, { method: 'POST' });
    if (!res.ok) throw new Error(`fault ${path}: ${res.status} ${await res.text()}`);
  }

  /** A login by code from the first screen (a phone: 14, an email: 33): the code asked, read and given when it comes. */
  async login(identifier: string, address = this.address()): Promise<boolean> {
    const since = Date.now();
    const first = await this.post('FeLogin', { identifier }, address);
    if (typeof first.data?.flow !== 'string') return false;
    const code = await this.code(identifier, since);
    if (!code) return false;
    const done = await this.post(
      'FeVerifyOtp',
      {
        flow: first.data.flow,
        ...(identifier.startsWith('+') ? { phone: identifier } : { email: identifier }),
        otp_code: code,
      },
      address,
    );
    return done.data?.next_step === 90;
  }

  /** A code asked for and never given: a person who changed their mind, as some always do. */
  async codeAbandoned(to: string): Promise<void> {
    await this.post('otp_generate', { uid: to });
  }

  /** A code asked for and verified, with one mistyped guess first when `typo`: whether the code was taken. */
  async codeVerified(to: string, { typo = false, resend = false } = {}): Promise<boolean> {
    const address = this.address();
    const since = Date.now();
    await this.post('otp_generate', { uid: to }, address);
    if (resend) await this.post('otp_generate', { uid: to }, address);
    const code = await this.code(to, since);
    // verify_otp names the code's key `email` whether it is a phone or an address.
    if (typo) await this.post('verify_otp', { email: to, otp_code: code === '000000' ? '111111' : '000000' }, address);
    return (
      code !== undefined && (await this.post('verify_otp', { email: to, otp_code: code }, address)).data?.valid === true
    );
  }
}

/** An account of the sandbox's identity fake (src/sandbox/identity.ts) whose login by code ends on the success screen (90). */
export const SEEDED_LOGINS = ['+393331234567'] as const;

/** Runs `work` every `everyMs` until stopped, a few at once at most; a failure is part of the drill, never its end. */
export function every(everyMs: number, work: () => Promise<unknown>, inFlight = 16): () => void {
  let running = 0;
  const timer = setInterval(() => {
    if (running >= inFlight) return;
    running += 1;
    work()
      .catch(() => undefined)
      .finally(() => (running -= 1));
  }, everyMs);
  return () => clearInterval(timer);
}
