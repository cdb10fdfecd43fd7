import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { ITALIAN_ISSUES, issueTextIn } from '../../src/core/issue-texts';
import { testApp } from '../support/app';

/*
 * One language per answer: the texts of `data.issues` follow the answer's language like its
 * `error` (Italian unless `en`). Every issue text the service writes has its Italian, and a
 * sample of refusals in each language carries no sentence of the other.
 */

const SRC = join(__dirname, '..', '..', 'src');
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) =>
    statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : name.endsWith('.ts') ? [join(dir, name)] : [],
  );

/** Issue texts written in src/: messages of issues and custom zod checks, and invalidField's second argument. */
function writtenIssueTexts(): Set<string> {
  const texts = new Set<string>();
  const literals = [
    /issues: \[\{ path: [^,]+, message: '([^']+)'/g,
    /issues\.push\(\{ path: [^,]+, message: '([^']+)'/g,
    /invalidField\([^,]+, '([^']+)'\)/g,
    /\.regex\([^,]+, '([^']+)'\)/g,
    /\{ error: '([^']+)'/g,
  ];
  for (const file of files(SRC)) {
    // Upstream replies' checks (clients) and the configuration's are logged, never answered; the sandbox's fakes answer as upstreams.
    if (
      file.includes(join('src', 'clients')) ||
      file.includes(join('src', 'sandbox')) ||
      file.includes(join('src', 'core', 'config')) ||
      file.endsWith(join('core', 'errors.ts'))
    )
      continue;
    const text = readFileSync(file, 'utf8');
    for (const pattern of literals) for (const match of text.matchAll(pattern)) texts.add(match[1]!);
    // A custom zod issue: every quoted text in its message (a ternary may choose between two).
    for (const match of text.matchAll(/addIssue\(\{[^}]*message: ([^}]+)\}/g))
      for (const quoted of match[1]!.matchAll(/'([^']*)'/g)) if (quoted[1]) texts.add(quoted[1]);
  }
  return texts;
}

const ENGLISH = /\b(the|not|must|give|only|expected|received|invalid|required|number|empty)\b/i;
const ITALIAN = /\b(non|deve|indica|atteso|ricevuto|valido|richiesto|vuoto|numero)\b/i;

describe('issue texts', () => {
  it('has the Italian of every issue text the service writes', () => {
    const written = writtenIssueTexts();
    expect(written.size).toBeGreaterThan(15);
    expect([...written].filter((text) => !(text in ITALIAN_ISSUES))).toEqual([]);
  });

  it('answers the English text for en and the Italian otherwise', () => {
    expect(issueTextIn('not a valid phone number', 'en')).toBe('not a valid phone number');
    expect(issueTextIn('not a valid phone number', undefined)).toBe('non è un numero di telefono valido');
    expect(issueTextIn('nested deeper than 32 levels', 'it')).toBe('annidato oltre 32 livelli');
  });

  const REFUSALS: Array<[string, Record<string, unknown>]> = [
    ['otp_generate', {}],
    ['otp_generate', { uid: 'a@b.example c@d.example' }],
    ['otp_generate', { uid: '12345' }],
    ['otp_generate', { uid: 'user-1' }],
    ['verify_otp', { otp_code: 5 }],
    ['FeLogin', { identifier: '' }],
    ['newsletter_subscribe', { email: 'x@y.example', testata: 'head_a' }],
    ['register', { email: 'not an email' }],
  ];

  it.each(REFUSALS)(
    'answers %s %j in one language: Italian by default, English with Accept-Language en',
    async (action, body) => {
      const app = testApp().callback();
      const italian = await request(app).post(`/?action=${action}`).send(body);
      const english = await request(app).post(`/?action=${action}`).set('Accept-Language', 'en').send(body);
      expect(italian.body.success).toBe(false);
      const italianIssues = (italian.body.data.issues ?? []) as Array<{ message: string }>;
      const englishIssues = (english.body.data.issues ?? []) as Array<{ message: string }>;
      expect(italianIssues.length).toBeGreaterThan(0);
      for (const { message } of italianIssues) expect(message).not.toMatch(ENGLISH);
      for (const { message } of englishIssues) expect(message).not.toMatch(ITALIAN);
      expect(english.body.error).not.toMatch(ITALIAN);
    },
  );
});
