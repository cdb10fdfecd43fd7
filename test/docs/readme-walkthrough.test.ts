import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/core/config/load';
import { startService, type Service } from '../../src/service';

/*
 * The sandbox walk-through of docs/getting-started.md (the README sends a newcomer there), run
 * as written: every `sh` block of "Try it by hand (sandbox)", in order, in one bash, against the service configured as `npm start` configures it (nothing set:
 * the embedded sandbox), on a free port instead of 8080, named to the blocks by SERVER__PORT as a
 * reader who started the service on another port names it. A curl wrapper records each answer
 * (outbox reads aside), and the steps they answered are compared with the journeys the document
 * describes, so a block that stops working, or starts answering something else, fails here.
 */

const run = promisify(execFile);
const WALKTHROUGH = join(__dirname, '..', '..', 'docs', 'getting-started.md');
const SECTION = '## Try it by hand (sandbox)';

/** The `sh` blocks of one `## ` section of the document, in order. */
function shellBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/getting-started.md has no section "${heading}"`);
  const end = markdown.indexOf('\n## ', start + heading.length + 2);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** One answer in a word: its next_step, `ok`, `!reason` for a refusal, `response` for the bare widget body; ` __utp` when it set the cookie. */
function summary(raw: string): string {
  const body = raw.slice(raw.indexOf('{'));
  const answer = JSON.parse(body) as {
    success?: boolean;
    data?: { next_step?: unknown; reason?: string };
    response?: unknown;
  };
  const word =
    answer.response !== undefined
      ? 'response'
      : answer.success === false
        ? `!${answer.data?.reason}`
        : answer.data?.next_step !== undefined
          ? String(answer.data.next_step)
          : 'ok';
  return /^set-cookie: __utp=/im.test(raw.slice(0, raw.indexOf('{'))) ? `${word} __utp` : word;
}

// Records every answer but the outbox's as "<block>\t<base64 of what curl printed>", and prints it unchanged.
const CURL_WRAPPER = `
curl() {
  local out
  out=$(command curl "$@"; printf x); out=\${out%x}
  case " $* " in *"/_sandbox/"*) ;; *) printf '%s\\t%s\\n' "$BLOCK" "$(printf '%s' "$out" | base64 -w0)" >> "$CURL_LOG";; esac
  printf '%s' "$out"
}
`;

describe('the sandbox walk-through', () => {
  let service: Service;
  let dir: string;

  beforeAll(async () => {
    // What `npm start` loads with nothing configured, but a free port and no log output: with those set, the sandbox is asked for by name.
    service = await startService(
      loadConfig({
        env: {
          NODE_ENV: 'development',
          SANDBOX__ENABLED: 'true',
          SERVER__PORT: '0',
          LOG__LEVEL: 'silent',
          OTP__LOG_FILE: '',
        },
      }),
    );
    dir = mkdtempSync(join(tmpdir(), 'readme-'));
  });
  afterAll(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs every block of the sandbox walk-through against the service, with the steps the document describes', async () => {
    expect(service.config.sandbox.enabled).toBe(true);
    const blocks = shellBlocks(readFileSync(WALKTHROUGH, 'utf8'), SECTION);
    const base = new URL(service.url);
    const script = ['set -euo pipefail', CURL_WRAPPER, ...blocks.map((block, i) => `BLOCK=${i}\n${block}`)].join('\n');
    const log = join(dir, 'answers.tsv');

    // The port comes from one variable, the one the service reads: no block names 8080 but as its default.
    expect(blocks.join('\n').replaceAll('${SERVER__PORT:-8080}', '')).not.toMatch(/8080/);
    // Twice in a row on one sandbox, as a newcomer who starts over would: the reset in the first block makes room.
    await run('bash', ['-c', script], {
      env: { ...process.env, SERVER__PORT: base.port, CURL_LOG: log },
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    await run('bash', ['-c', script], {
      env: { ...process.env, SERVER__PORT: base.port, CURL_LOG: log },
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });

    const byBlock = blocks.map(() => [] as string[]);
    for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
      const [block, encoded] = line.split('\t');
      byBlock[Number(block)]!.push(summary(Buffer.from(encoded!, 'base64').toString('utf8')));
    }
    const once = [
      [], // B and the json helper
      ['ok', 'ok'], // a one-time code: otp_generate, verify_otp
      ['ok', 'ok', 'ok', 'ok', 'ok __utp'], // phone, user exists, with the primitives
      [], // the code helper
      ['14', '90 __utp'], // Mario by phone
      ['33', '90'], // Mario by email
      ['33', '61', '62', '90 __utp'], // Giulia by email, adding a phone
      ['23', '37', '90', '62', '90', '90'], // Sara registers by email, adds a phone, completes the profile
      ['ok', 'ok', 'response'], // newsletter_feed, newsletter_subscribe, recommendations' bare widget body
    ];
    expect(byBlock).toEqual(once.map((answers) => [...answers, ...answers]));
  }, 150_000);
});
