import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startService, type Service } from '../../src/service';
import type { OutboxMessage } from '../../src/sandbox/outbox';
import { testConfig } from '../support/app';
import { eventually } from '../support/eventually';
import { freePort } from '../support/ports';

/*
 * The real service on the sandbox (src/service.ts, as `npm start` runs it) on a free port, and
 * Debian's Chromium driven by playwright-core: never a downloaded browser. Each test gets a
 * fresh browser context; a failing one leaves a screenshot in test-artifacts/ and names it.
 */

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts');
const silent = pino({ level: 'silent' });

export interface E2e {
  service: Service;
  browser: Browser;
  /** The service by name, http://localhost:<port>: a passkey's relying party must be a name (browsers refuse an IP). */
  origin: string;
}

/** Settings over the sandbox's, or a function of the origin for those that name it (passkeys). */
type E2eConfig = Record<string, unknown> | ((origin: string) => Record<string, unknown>);

async function startE2e(config: E2eConfig = {}): Promise<E2e> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the browser tests need Debian's chromium package. Run the README test command (npm ci && npm test), which installs it with apt-get.`,
    );
  }
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const service = await startService(
    testConfig({
      sandbox: { enabled: true },
      server: { host: '127.0.0.1', port },
      ...(typeof config === 'function' ? config(origin) : config),
    }),
    { log: silent, otpLog: silent },
  );
  try {
    // playwright gives every launch a fresh temporary user-data-dir, removed on close.
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    return { service, browser, origin };
  } catch (err) {
    await service.close();
    throw err;
  }
}

async function stopE2e(e2e: E2e | undefined): Promise<void> {
  await e2e?.browser.close();
  await e2e?.service.close();
}

/** The service and a browser for one test file: started before its tests, stopped after them. */
export function useE2e(config: E2eConfig = {}): () => E2e {
  let e2e: E2e | undefined;
  beforeAll(async () => {
    e2e = await startE2e(config);
  }, 60_000);
  afterAll(async () => {
    await stopE2e(e2e);
  });
  return () => {
    if (!e2e) throw new Error('e2e: the service and browser did not start (see beforeAll)');
    return e2e;
  };
}

/** One API request the page made, with its JSON body and JSON answer. */
export interface Exchange {
  action: string;
  body: Record<string, unknown>;
  answer: { success: boolean; error: string | null; data: Record<string, unknown> };
}

export interface PageRun {
  page: Page;
  context: BrowserContext;
  /** Every action the page called (POST /<action>), in order. */
  exchanges: Exchange[];
}

const fileName = (title: string) =>
  `${title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 80)}.png`;

/**
 * A fresh context and page for `body`. Console errors (a CSP violation is one) and page errors
 * fail the test. On failure a full-page screenshot is saved and its path added to the error.
 */
export async function withPage(
  e2e: E2e,
  title: string,
  body: (run: PageRun) => Promise<void>,
  { locale = 'it-IT' }: { locale?: string } = {},
): Promise<void> {
  // The browser's language (Accept-Language): the page is Italian whatever it is.
  const context = await e2e.browser.newContext({ viewport: { width: 1280, height: 900 }, locale });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  const exchanges: Exchange[] = [];
  page.on('response', async (response) => {
    const url = new URL(response.url());
    // The page calls the typed client, `POST /<action>`; `POST /?action=<action>` is the same call.
    const action =
      url.pathname === '/'
        ? url.searchParams.get('action')
        : /^\/[\w-]+$/.test(url.pathname)
          ? url.pathname.slice(1)
          : null;
    if (response.request().method() !== 'POST' || !action) return;
    const exchange = {
      action,
      body: response.request().postDataJSON() as Exchange['body'],
      answer: undefined as unknown as Exchange['answer'],
    };
    exchanges.push(exchange);
    exchange.answer = (await response.json().catch(() => null)) as Exchange['answer'];
  });
  try {
    await body({ page, context, exchanges });
    expect(problems).toEqual([]);
  } catch (err) {
    const path = join(ARTIFACTS, fileName(title));
    await mkdir(ARTIFACTS, { recursive: true });
    const saved = await page.screenshot({ path, fullPage: true }).then(
      () => `screenshot: ${path}`,
      (shotErr: Error) => `no screenshot (${shotErr.message})`,
    );
    if (err instanceof Error)
      err.message = `${err.message}\n${saved}${problems.length ? `\n${problems.join('\n')}` : ''}`;
    throw err;
  } finally {
    await context.close();
  }
}

/**
 * The newest code sent on `channel` to `to`, from the outbox the page links to (its page for
 * people, /_sandbox/outbox.html), opened in another tab of the same browser as its JSON twin
 * (/_sandbox/outbox), which also counts the messages a test waits past.
 */
export async function codeFromOutbox(
  run: PageRun,
  channel: 'sms' | 'whatsapp' | 'email',
  to: string,
  after = 0,
): Promise<string> {
  const page = await run.page.locator('#outbox-link').evaluate((link) => (link as unknown as { href: string }).href);
  expect(new URL(page).pathname).toBe('/_sandbox/outbox.html');
  const href = page.replace(/\.html$/, '');
  const tab = await run.context.newPage();
  try {
    // A mail reaches the outbox a moment after the SMTP reply, so after the page moved on: reload until the code is there.
    return await eventually(
      async () => {
        await tab.goto(href);
        const { data } = JSON.parse(await tab.locator('body').innerText()) as { data: { messages: OutboxMessage[] } };
        const found = data.messages.filter((m) => m.channel === channel && m.to.includes(to));
        if (found.length > after && found[0]?.code) return found[0].code;
        throw new Error(
          `no ${channel} code for ${to} in the outbox (${found.length} ${channel} messages to it, waiting for more than ${after})`,
        );
      },
      { timeoutMs: 3_000, intervalMs: 100 },
    );
  } finally {
    await tab.close();
  }
}

/** Every text element whose contrast on its (first opaque) background is below 4.5:1 (WCAG AA), as a script for page.evaluate. */
export const LOW_CONTRAST = `(() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || c[3] > 0) return c; } return [255, 255, 255]; };
  const low = [];
  for (const el of document.querySelectorAll('body *')) {
    if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
    const a = lum(rgb(getComputedStyle(el).color)), b = lum(background(el));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) low.push(el.tagName + ' ' + ratio.toFixed(2) + ' ' + el.textContent.trim().slice(0, 30));
  }
  return low;
})()`;

/** A phone login through the API (FeLogin, the sandbox's code, FeVerifyOtp), as the funnel counts it. */
export async function phoneLogin(url: string, phone: string): Promise<void> {
  const post = (action: string, body: Record<string, unknown>) =>
    fetch(`${url}/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<{ data: Record<string, unknown> }>);
  await post('FeLogin', { identifier: phone });
  const outbox = (await (await fetch(`${url}/_sandbox/outbox?to=${encodeURIComponent(phone)}`)).json()) as {
    data: { code: string };
  };
  const done = await post('FeVerifyOtp', { flow: 'phone', phone, otp_code: outbox.data.code });
  expect(done.data.next_step).toBe(90);
}
