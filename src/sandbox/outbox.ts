/** What the sandbox's fake SMS gateway and SMTP server received, newest first, so a person can log in by hand. */
export interface OutboxMessage {
  channel: 'sms' | 'whatsapp' | 'email' | 'collector' | 'newsletter';
  to: string;
  subject?: string;
  body: string;
  /** The first run of digits of otp.length found in the body, for convenience. */
  code?: string;
  at: string;
}

export class Outbox {
  private readonly messages: OutboxMessage[] = [];
  constructor(private readonly capacity = 200) {}

  add(message: Omit<OutboxMessage, 'at'>): void {
    this.messages.unshift({ ...message, at: new Date().toISOString() });
    if (this.messages.length > this.capacity) this.messages.pop();
  }

  list(channel?: OutboxMessage['channel']): OutboxMessage[] {
    return channel ? this.messages.filter((m) => m.channel === channel) : [...this.messages];
  }

  /**
   * The messages to one recipient, newest first. A phone matches by its digits, however it is
   * written (`+39 333 123 4567`, `393331234567`, or ` 393331234567` from an unencoded `+`); an
   * email ignores case; anything else (a collector uid) matches exactly.
   */
  to(recipient: string): OutboxMessage[] {
    const key = recipientKey(recipient);
    return this.messages.filter((m) => recipientKey(m.to) === key);
  }

  /** The newest message carrying a code, per recipient, newest first. */
  newestCodes(): OutboxMessage[] {
    const seen = new Set<string>();
    const newest: OutboxMessage[] = [];
    for (const message of this.messages) {
      if (!message.code) continue;
      const key = recipientKey(message.to);
      if (seen.has(key)) continue;
      seen.add(key);
      newest.push(message);
    }
    return newest;
  }

  clear(): void {
    this.messages.length = 0;
  }
}

const PHONE_LIKE = /^[\s+]*[\d\s().-]{6,}$/;

/** How recipients are compared: a phone by its digits, an email in lower case, anything else as is. */
function recipientKey(recipient: string): string {
  const trimmed = recipient.trim();
  if (trimmed.includes('@')) return `email:${trimmed.toLowerCase()}`;
  if (PHONE_LIKE.test(trimmed)) return `phone:${trimmed.replace(/\D/g, '')}`;
  return `other:${trimmed}`;
}
