import pino from 'pino';
import type { Config } from '../../src/core/config/schema';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import type { SandboxContext, SandboxFake } from '../../src/sandbox/fake';
import { sandboxFakes } from '../../src/sandbox/fakes';
import { Outbox, type OutboxMessage } from '../../src/sandbox/outbox';
import { tokenFingerprint } from '../../src/sandbox/collector';

/*
 * The fake upstreams of the sandbox (SMS gateway, SMTP server, identity provider, collector...),
 * started once in the soak's own process and shared by every instance, as a fleet shares its
 * real upstreams. The fakes write what they receive to an outbox; the soak hands them its own,
 * which keeps every code per recipient and counts the collector's ingests per login, where the
 * sandbox's view keeps only the last 200 messages.
 */

const recipientKey = (to: string) => (to.includes('@') ? to.trim().toLowerCase() : to.replace(/\D/g, ''));

export class SoakOutbox extends Outbox {
  private readonly codes = new Map<string, string[]>();
  private readonly ingests = new Map<string, number>();
  issued = 0;

  override add(message: Omit<OutboxMessage, 'at'>): void {
    super.add(message);
    if (message.channel === 'collector') {
      // The fake keeps a digest of the token: with the uid, it tells logins apart.
      const { token_sha256 } = JSON.parse(message.body) as { token_sha256: string };
      const key = ingestKey(message.to, token_sha256);
      this.ingests.set(key, (this.ingests.get(key) ?? 0) + 1);
    } else if (message.code) {
      const key = recipientKey(message.to);
      this.codes.set(key, [...(this.codes.get(key) ?? []), message.code]);
      this.issued += 1;
    }
  }

  /** How many codes went to phones starting with this prefix (`+4475206`) so far. */
  codesTo(prefix: string): number {
    const digits = prefix.replace(/\D/g, '');
    let count = 0;
    for (const [key, codes] of this.codes) if (key.startsWith(digits)) count += codes.length;
    return count;
  }

  /** How many codes went to this phone or email so far. */
  codeCount(recipient: string): number {
    return this.codes.get(recipientKey(recipient))?.length ?? 0;
  }

  /** The newest code to this recipient once more than `seen` have arrived; undefined after `timeoutMs`. */
  async nextCode(recipient: string, seen: number, timeoutMs = 3_000): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const codes = this.codes.get(recipientKey(recipient)) ?? [];
      if (codes.length > seen) return codes[codes.length - 1];
      if (Date.now() > deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  ingestsOf(uid: string, accessToken: string): number {
    return this.ingests.get(ingestKey(uid, tokenFingerprint(accessToken))) ?? 0;
  }
}

const ingestKey = (uid: string, tokenDigest: string) => `${uid} ${tokenDigest}`;

/** The fake with the soak's outbox in place of the sandbox's. */
function withOutbox(make: () => SandboxFake, outbox: SoakOutbox): () => SandboxFake {
  const swap = (sandbox: SandboxContext): SandboxContext => ({ ...sandbox, outbox });
  return () => {
    const fake = make();
    return {
      ...fake,
      mount: fake.mount && ((router, sandbox) => fake.mount!(router, swap(sandbox))),
      start: fake.start && ((sandbox) => fake.start!(swap(sandbox))),
      configure: fake.configure && ((sandbox) => fake.configure!(swap(sandbox))),
    };
  };
}

export interface SoakUpstreams {
  outbox: SoakOutbox;
  /** The configuration sections that point an instance at the fakes. */
  config: Pick<Config, 'sms' | 'mail' | 'identity' | 'user_collector' | 'newsletter' | 'recommendations'>;
  close(): Promise<void>;
}

export async function startUpstreams(base: Config): Promise<SoakUpstreams> {
  const outbox = new SoakOutbox();
  const sandbox: Sandbox = await startSandbox(
    base,
    pino({ level: 'silent' }),
    sandboxFakes.map((make) => withOutbox(make, outbox)),
  );
  const { sms, mail, identity, user_collector, newsletter, recommendations } = sandbox.config;
  return {
    outbox,
    config: { sms, mail, identity, user_collector, newsletter, recommendations },
    close: () => sandbox.close(),
  };
}
