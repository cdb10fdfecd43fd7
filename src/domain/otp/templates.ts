import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectPath } from '../../core/paths';

/*
 * The OTP message templates (templates/otp_email.html, templates/otp_sms.txt), read once at
 * start-up and filled per send. The plain-text part of the mail is derived from the HTML once,
 * at load, so the two parts never drift apart.
 */

export const TEMPLATES_DIR = projectPath('templates');

const PLACEHOLDERS = ['OTP_CODE', 'OTP_EXPIRY_MINUTES', 'APP_NAME', 'YEAR'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];
export type TemplateValues = Record<Placeholder, string>;

export interface OtpTemplates {
  sms: string;
  emailHtml: string;
  emailText: string;
}

export interface OtpMessage {
  subject: string;
  html: string;
  text: string;
  sms: string;
}

const escapeHtml = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Refuses at start-up a template that lacks the code or names a placeholder nobody fills. */
function checkTemplate(name: string, template: string): string {
  const unknown = [...template.matchAll(/\{\{\s*([A-Z_]+)\s*\}\}/g)].map((m) => m[1]!).filter((p) => !PLACEHOLDERS.includes(p as Placeholder));
  if (unknown.length > 0) throw new Error(`template ${name}: unknown placeholder(s) ${unknown.join(', ')}`);
  if (!template.includes('{{OTP_CODE}}')) throw new Error(`template ${name}: {{OTP_CODE}} is missing`);
  return template;
}

/** A template cut once into its text and its placeholders (odd indexes), so filling it is a join. */
const compiled = new Map<string, string[]>();
function partsOf(template: string): string[] {
  let parts = compiled.get(template);
  if (!parts) {
    // split() with a capturing group keeps the placeholder names at the odd indexes.
    parts = template.split(/\{\{\s*(OTP_CODE|OTP_EXPIRY_MINUTES|APP_NAME|YEAR)\s*\}\}/);
    // Templates are a handful: the cache only guards against a caller rendering endless one-off strings.
    if (compiled.size >= 32) compiled.clear();
    compiled.set(template, parts);
  }
  return parts;
}

export function renderTemplate(template: string, values: TemplateValues, escape: (v: string) => string = (v) => v): string {
  const parts = partsOf(template);
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) out += escape(values[parts[i] as Placeholder]) + parts[i + 1]!;
  return out;
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ', copy: '©', egrave: 'è', agrave: 'à' };

/** A readable plain-text rendering of the mail's HTML: block ends become line breaks, tags go, entities decode. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(head|style|script)[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|tr|li|table)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#?\w+);/g, (whole, name: string) => entities[name] ?? whole)
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line, i, lines) => line !== '' || (i > 0 && lines[i - 1] !== ''))
    .join('\n')
    .trim();
}

export function loadOtpTemplates(dir: string = TEMPLATES_DIR): OtpTemplates {
  const emailHtml = checkTemplate('otp_email.html', readFileSync(join(dir, 'otp_email.html'), 'utf8'));
  const sms = checkTemplate('otp_sms.txt', readFileSync(join(dir, 'otp_sms.txt'), 'utf8').trim());
  return { sms, emailHtml, emailText: htmlToText(emailHtml) };
}

export interface OtpMessageInput {
  code: string;
  ttlSeconds: number;
  appName: string;
  now: number;
}

/** Minutes as a person reads them: whole minutes, rounded down so the text never promises more time than the code has, at least 1. */
export const expiryMinutes = (ttlSeconds: number): number => Math.max(1, Math.floor(ttlSeconds / 60));

export function renderOtpMessage(templates: OtpTemplates, input: OtpMessageInput): OtpMessage {
  const values: TemplateValues = {
    OTP_CODE: input.code,
    OTP_EXPIRY_MINUTES: String(expiryMinutes(input.ttlSeconds)),
    APP_NAME: input.appName,
    YEAR: String(new Date(input.now).getFullYear()),
  };
  // Each part is rendered when read: a code sent by SMS only never renders the mail.
  let html: string | undefined;
  let text: string | undefined;
  let sms: string | undefined;
  return {
    subject: `${input.appName}: il tuo codice di verifica`,
    get html() {
      return (html ??= renderTemplate(templates.emailHtml, values, escapeHtml));
    },
    get text() {
      return (text ??= renderTemplate(templates.emailText, values));
    },
    get sms() {
      return (sms ??= renderTemplate(templates.sms, values));
    },
  };
}
