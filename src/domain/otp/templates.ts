import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectPath } from '../../core/paths';

/*
 * The OTP message templates, one folder per language (templates/<locale>/otp_email.html and
 * otp_sms.txt), read once at start-up and filled per send. The mail's subject is the HTML's
 * <title> and its plain-text part is derived from the HTML, both once at load, so the parts of
 * one language never drift apart.
 */

export const TEMPLATES_DIR = projectPath('templates');

const PLACEHOLDERS = ['OTP_CODE', 'OTP_EXPIRY_MINUTES', 'APP_NAME', 'YEAR'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];
type TemplateValues = Record<Placeholder, string>;

export interface OtpTemplates {
  sms: string;
  emailHtml: string;
  emailText: string;
  /** The <title> of the HTML, as text. */
  subject: string;
}

/** Each language's templates by its locale (`it`, `en`), as the folders under templates/ name them. */
export type LocalizedTemplates = ReadonlyMap<string, OtpTemplates>;

export interface OtpMessage {
  subject: string;
  html: string;
  text: string;
  sms: string;
}

const escapeHtml = (value: string) =>
  value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

/** Refuses at start-up a template that lacks the code or names a placeholder nobody fills. */
function checkTemplate(name: string, template: string): string {
  const unknown = [...template.matchAll(/\{\{\s*([A-Z_]+)\s*\}\}/g)]
    .map((m) => m[1]!)
    .filter((p) => !PLACEHOLDERS.includes(p as Placeholder));
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
    // Templates are a handful (four per language): the cache only guards against a caller rendering endless one-off strings.
    if (compiled.size >= 128) compiled.clear();
    compiled.set(template, parts);
  }
  return parts;
}

function renderTemplate(template: string, values: TemplateValues, escape: (v: string) => string = (v) => v): string {
  const parts = partsOf(template);
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) out += escape(values[parts[i] as Placeholder]) + parts[i + 1]!;
  return out;
}

const entities: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  '#39': "'",
  nbsp: ' ',
  copy: '©',
  egrave: 'è',
  agrave: 'à',
};

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

/** One language's templates, from its folder (templates/<locale>/). */
export function loadOtpTemplates(dir: string): OtpTemplates {
  const emailHtml = checkTemplate('otp_email.html', readFileSync(join(dir, 'otp_email.html'), 'utf8'));
  const sms = checkTemplate('otp_sms.txt', readFileSync(join(dir, 'otp_sms.txt'), 'utf8').trim());
  const title = /<title>([\s\S]*?)<\/title>/i.exec(emailHtml)?.[1];
  if (title === undefined || htmlToText(title) === '')
    throw new Error(`template ${join(dir, 'otp_email.html')}: a <title> is needed, it is the subject`);
  const templates = { sms, emailHtml, emailText: htmlToText(emailHtml), subject: htmlToText(title) };
  // Cut into parts now, so the first send in each language does no more work than the next.
  for (const template of Object.values(templates)) partsOf(template);
  return templates;
}

/** A folder name that is a locale (`it`, `en`, `pt-br`); anything else under templates/ is not a language. */
const LOCALE_FOLDER = /^[a-z]{2,3}(-[a-z0-9]{2,8})?$/;

/** Every language under `root`, and `required` (mail.default_locale) among them, or the start-up stops. */
export function loadLocalizedTemplates(required: string, root: string = TEMPLATES_DIR): LocalizedTemplates {
  const templates = new Map<string, OtpTemplates>();
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.isDirectory() && LOCALE_FOLDER.test(entry.name))
      templates.set(entry.name, loadOtpTemplates(join(root, entry.name)));
  }
  if (!templates.has(required))
    throw new Error(
      `templates: no folder ${join(root, required)} for mail.default_locale "${required}" (found: ${[...templates.keys()].join(', ') || 'none'})`,
    );
  return templates;
}

export interface OtpMessageInput {
  code: string;
  ttlSeconds: number;
  appName: string;
  now: number;
  /** sms.webotp_domain: when set, the SMS ends with the line `@<domain> #<code>`. */
  webOtpDomain?: string;
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
    subject: renderTemplate(templates.subject, values),
    get html() {
      return (html ??= renderTemplate(templates.emailHtml, values, escapeHtml));
    },
    get text() {
      return (text ??= renderTemplate(templates.emailText, values));
    },
    get sms() {
      // The domain-bound code line (WebOTP, Android autofill) must be the message's last line.
      return (sms ??=
        renderTemplate(templates.sms, values) + (input.webOtpDomain ? `\n@${input.webOtpDomain} #${input.code}` : ''));
    },
  };
}
