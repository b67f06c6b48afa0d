import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { ExecutionContext } from 'ava';
import type { TestGateway } from '../helpers/stack';

/** Debian's chromium (dev/scripts/lib/tools.ts installs it when missing); Playwright's own download is not used. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export const SCREENSHOT_DIR = path.resolve('.screenshots/console');
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 860 };

/**
 * Every console error, uncaught page error, failed request and 4xx/5xx
 * answer the page meets; `expect(status)` allows one the test provokes.
 */
export class PageWatch {
  readonly problems: string[] = [];
  private readonly allowed = new Set<number>();
  constructor(readonly page: Page) {
    page.on('console', (m) => {
      if (m.type() === 'error' && !this.allowedConsole(m.text())) this.problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => this.problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => {
      const f = r.failure()?.errorText ?? '';
      // A download navigation is reported as aborted; that is not a failure.
      if (!/ERR_ABORTED/.test(f) || !r.url().endsWith('.csv')) this.problems.push(`request failed: ${r.method()} ${r.url()} ${f}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400 && !this.allowed.has(r.status())) this.problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
    });
  }
  /** Chromium logs a console error for every 4xx/5xx document; allowed statuses are not problems. */
  private allowedConsole(text: string): boolean {
    const m = /status of (\d{3})/.exec(text);
    return !!m && this.allowed.has(Number(m[1]));
  }
  expect(status: number): void {
    this.allowed.add(status);
  }
  clearExpected(): void {
    this.allowed.clear();
  }
  assertClean(t: ExecutionContext): void {
    t.deepEqual(this.problems, [], 'no console errors or failed requests');
  }
}

export async function newPage(browser: Browser, viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page; watch: PageWatch }> {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  page.on('dialog', (d) => void d.accept());
  return { context, page, watch: new PageWatch(page) };
}

/**
 * Screenshot the current page at desktop and phone widths, and check that at
 * phone width nothing but a table's own scroller is wider than the window.
 */
export async function screenshots(page: Page, name: string, t?: ExecutionContext): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const size = page.viewportSize() ?? DESKTOP;
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  const wide = (await page.evaluate('document.documentElement.scrollWidth')) as number;
  const culprits = wide <= PHONE.width ? '' : ((await page.evaluate(`[...document.querySelectorAll('body *')]
    .filter((e) => e.getBoundingClientRect().right > ${PHONE.width} && !e.closest('.table-wrap, nav.main'))
    .slice(0, 4).map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + (e.id ? '#' + e.id : '') + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')`)) as string);
  t?.true(wide <= PHONE.width, `${name}: the page is ${wide} px wide in a ${PHONE.width} px window (${culprits})`);
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(size);
}

export async function newUser(gw: TestGateway, label: string): Promise<{ id: string; email: string; password: string; accountId: string }> {
  const email = `${label}-${Math.random().toString(36).slice(2, 8)}@example.test`;
  const password = `pw-${label}-correct horse`;
  const u = await gw.deps.people.createUser({ email, name: label, password });
  return { id: u._id, email, password, accountId: u.personal_account_id };
}

export async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(`${url}/console/signin`);
  await page.fill('#f-email', email);
  await page.fill('#f-password', password);
  await Promise.all([page.waitForURL(/\/console\/overview/), page.click('form[action="/console/signin"] button.primary')]);
}

/** The sign-in page's pre-session: its cookie and the form's CSRF token (the double submit of the sign-in form). */
export async function signInPresession(url: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${url}/console/signin`);
  const cookie = /mg_console_pre=[^;]+/.exec(res.headers.getSetCookie().join('\n'))![0];
  return { cookie, csrf: csrfOf(await res.text()) };
}

/** Posts the sign-in form (people's or, with `token`, the operator's) over plain HTTP; the answer is not followed. */
export async function postSignIn(url: string, fields: Record<string, string>): Promise<Response> {
  const pre = await signInPresession(url);
  return fetch(`${url}/console/signin`, {
    method: 'POST', redirect: 'manual',
    headers: { cookie: pre.cookie, origin: url, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: pre.csrf, ...fields }).toString(),
  });
}

const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1];

/**
 * A signed-in console session over plain HTTP (fetch, no browser) for tests that need no page script:
 * GET, and form POST with the session's CSRF token; redirects are not followed.
 */
export async function httpSession(url: string, email: string, password: string) {
  return httpSessionOf(url, { email, password });
}

/** The same for the operator (the admin token on the operator sign-in form). */
export async function operatorHttpSession(url: string, token: string) {
  return httpSessionOf(url, { mode: 'operator', token });
}

async function httpSessionOf(url: string, fields: Record<string, string>) {
  const signedIn = await postSignIn(url, fields);
  const cookie = /mg_console=[^;]+/.exec(signedIn.headers.getSetCookie().join('\n'))![0];
  const get = (path: string) => fetch(`${url}${path}`, { redirect: 'manual', headers: { cookie } });
  const csrf = csrfOf(await (await get('/console/overview')).text());
  const post = (path: string, form: Record<string, string | string[]> = {}) => {
    const body = new URLSearchParams({ _csrf: csrf });
    for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one);
    return fetch(`${url}${path}`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: url, 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
  };
  return { get, post, cookie, csrf };
}
