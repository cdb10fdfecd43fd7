import { diagnosticsCaller, proofRequired } from '../../domain/guard';
import type { ActionContext } from '../action';

/*
 * test_mail and test_sms send real messages to any recipient the caller names: open to anyone
 * they would be a spam and SMS toll-fraud relay. They answer only to the internal key
 * (`x-internal-key`), or in the sandbox; `debug` (a staging server) opens nothing.
 */
export function requireDiagnosticsAccess(ctx: Pick<ActionContext, 'deps' | 'keys'>): void {
  if (diagnosticsCaller(ctx)) return;
  throw proofRequired();
}

/** A sample code for test messages, plainly not a real one. */
export const sampleCode = (length: number): string => '1234567890'.repeat(2).slice(0, length);

/** An upstream URL as diagnostics may show it: no credentials, no query (keys travel there). */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '';
  }
}
