/** What the sandbox's fake SMS gateway and SMTP server received, newest first, so a person can log in by hand. */
export interface OutboxMessage {
  channel: 'sms' | 'email' | 'collector' | 'newsletter';
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

  clear(): void {
    this.messages.length = 0;
  }
}
