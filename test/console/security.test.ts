import test from 'ava';
import http from 'node:http';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { startGateway, type TestGateway } from '../helpers/stack';
import { httpSession, launchBrowser, newPage, newUser, postSignIn, signIn } from './browser';
import { GatewayError } from '../../domain/errors';
import { SIGN_IN_MAX_FAILURES } from '../../capabilities/accounts/sign-in';

let gw: TestGateway;
let browser: Browser;
// Everything the gateway logs in this process, to prove no key plaintext is ever written.
const logged: string[] = [];
const realOut = process.stdout.write.bind(process.stdout);
const realErr = process.stderr.write.bind(process.stderr);
// pino writes to fd 1 with fs.writeSync (sonic-boom, sync mode).
const realWriteSync = fs.writeSync;

test.before(async () => {
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => { logged.push(String(chunk)); return realOut(chunk as never, ...(rest as [])); }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => { logged.push(String(chunk)); return realErr(chunk as never, ...(rest as [])); }) as typeof process.stderr.write;
  fs.writeSync = ((fd: number, data: unknown, ...rest: unknown[]) => {
    if (fd === 1 || fd === 2) logged.push(typeof data === 'string' ? data : Buffer.from(data as Uint8Array).toString('utf8'));
    return (realWriteSync as (...a: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;
  gw = await startGateway({ LOG_LEVEL: 'debug' }, { simulator: true, worker: true });
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await gw?.close();
  process.stdout.write = realOut;
  process.stderr.write = realErr;
  fs.writeSync = realWriteSync;
});

test.serial("another user's keys, tasks and calls are invisible (404) in the console as in the API", async (t) => {
  const a = await newUser(gw, 'owner');
  const b = await newUser(gw, 'intruder');
  const aKey = await gw.newKey(a.accountId);
  const bKey = await gw.newKey(b.accountId);
  const sub = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST', headers: { authorization: `Bearer ${aKey.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a fox', async: true }),
  });
  const task = (await sub.json()) as { id: string };
  const requestId = sub.headers.get('x-gateway-trace')!;

  // The API: B's key cannot see A's task.
  const api = await fetch(`${gw.url}/v1/images/generations/${task.id}`, { headers: { authorization: `Bearer ${bKey.key}` } });
  t.is(api.status, 404);

  const { page, watch, context } = await newPage(browser);
  await signIn(page, gw.url, b.email, b.password);
  watch.expect(404);
  for (const path of [`/console/keys/${aKey.id}`, `/console/tasks/${task.id}`, `/console/lookup?id=${requestId}`, `/console/lookup?id=${task.id}`, '/console/keys/key_doesnotexist']) {
    const res = await page.goto(`${gw.url}${path}`);
    t.is(res?.status(), 404, path);
    t.false(((await page.content()) ?? '').includes(aKey.key.slice(0, 20)));
  }
  // A state change on A's key, with B's own valid CSRF token: 404 too, and nothing changes.
  const csrf = await page.getAttribute('input[name=_csrf]', 'value');
  const post = await context.request.post(`${gw.url}/console/keys/${aKey.id}/disable`, { form: { _csrf: csrf! }, headers: { origin: gw.url } });
  t.is(post.status(), 404);
  const reveal = await context.request.post(`${gw.url}/console/keys/${aKey.id}/reveal`, { form: { _csrf: csrf! }, headers: { origin: gw.url } });
  t.is(reveal.status(), 404);
  t.false((await reveal.text()).includes(aKey.key));
  t.true((await gw.deps.keys.get(aKey.id)).enabled);
  // The account switcher refuses an account B does not manage.
  const sw = await context.request.post(`${gw.url}/console/account`, { form: { _csrf: csrf!, account_id: a.accountId }, headers: { origin: gw.url } });
  t.is(sw.status(), 404);
  // B's own lists do not show A's objects.
  await page.goto(`${gw.url}/console/keys`);
  t.false((await page.content()).includes(aKey.id));
  await page.goto(`${gw.url}/console/tasks`);
  t.false((await page.content()).includes(task.id));
  watch.assertClean(t);
  await context.close();
});

test.serial('a cross-site form post is refused; the session cookie is HttpOnly and SameSite', async (t) => {
  const u = await newUser(gw, 'victim');
  const key = await gw.newKey(u.accountId);
  const { page, context } = await newPage(browser);
  await signIn(page, gw.url, u.email, u.password);

  const cookies = await context.cookies(gw.url);
  const session = cookies.find((c) => c.name === 'mg_console');
  t.truthy(session);
  t.true(session!.httpOnly);
  t.is(session!.sameSite, 'Lax');
  t.false(((await page.evaluate('document.cookie')) as string).includes('mg_console'), 'scripts cannot read the session cookie');

  // An attacker's page on another origin auto-submits a form to the console (with and without a guessed token).
  const evil = http.createServer((req, res) => {
    const token = req.url?.includes('guess') ? '<input name="_csrf" value="guessed">' : '';
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><form id="f" method="post" action="${gw.url}/console/keys/${key.id}/disable">${token}</form><script>document.getElementById('f').submit()</script>`);
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
  for (const path of ['/', '/guess']) {
    const answer = page.waitForResponse((r) => r.url().endsWith(`/keys/${key.id}/disable`));
    await page.goto(`${evilUrl}${path}`);
    t.is((await answer).status(), 403, `cross-site post ${path}`);
  }
  evil.close();
  t.true((await gw.deps.keys.get(key.id)).enabled, 'the key is still enabled');

  // The cookie alone (no token, no Origin: a non-browser client) is refused too.
  const cookie = `mg_console=${session!.value}`;
  const bare = await fetch(`${gw.url}/console/keys/${key.id}/disable`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
  t.is(bare.status, 403);
  t.true((await gw.deps.keys.get(key.id)).enabled);

  // Sign-out ends the session on the server: the old cookie no longer works.
  await page.goto(`${gw.url}/console/overview`);
  await Promise.all([page.waitForURL(/\/console\/signin/), page.click('form.signout button')]);
  const after = await fetch(`${gw.url}/console/overview`, { redirect: 'manual', headers: { cookie } });
  t.is(after.status, 302);
  t.regex(after.headers.get('location') ?? '', /\/console\/signin/);
  await context.close();
});

test.serial('sign-in attempts are rate-limited, and the sign-in form needs its CSRF token', async (t) => {
  const u = await newUser(gw, 'limited');
  const { page, watch, context } = await newPage(browser);
  watch.expect(401);
  watch.expect(429);
  for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) {
    await page.goto(`${gw.url}/console/signin`);
    await page.fill('#f-email', u.email);
    await page.fill('#f-password', 'wrong');
    await page.click('form[action="/console/signin"] button.primary');
    t.regex((await page.textContent('#err-password')) ?? '', /wrong email or password/i);
  }
  await page.goto(`${gw.url}/console/signin`);
  await page.fill('#f-email', u.email);
  await page.fill('#f-password', u.password);
  const res = page.waitForResponse((r) => r.url().endsWith('/console/signin') && r.request().method() === 'POST');
  await page.click('form[action="/console/signin"] button.primary');
  t.is((await res).status(), 429);
  t.regex((await page.textContent('main')) ?? '', /too many failed sign-in attempts/i);
  watch.assertClean(t);
  await context.close();

  // No pre-session token: refused before the password is even checked.
  const v = await newUser(gw, 'nocsrf');
  const forged = await fetch(`${gw.url}/console/signin`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: v.email, password: v.password }).toString(),
  });
  t.is(forged.status, 403);
  t.is(forged.headers.get('set-cookie')?.includes('mg_console='), undefined);
});

test.serial('no key plaintext is ever logged (creation, reveal, use, disable)', async (t) => {
  const u = await newUser(gw, 'logs');
  const { page, context } = await newPage(browser);
  await signIn(page, gw.url, u.email, u.password);
  await page.goto(`${gw.url}/console/keys`);
  await page.fill('#f-name', 'logged?');
  await page.click('#new-key button.primary');
  const plaintext = (await page.textContent('[data-testid=plaintext]'))!.trim();
  const keyId = (await gw.deps.keys.listByAccount(u.accountId))[0]._id;
  await page.goto(`${gw.url}/console/keys/${keyId}`);
  await page.click('form[action$="/reveal"] button');
  await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${plaintext}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await page.goto(`${gw.url}/console/keys/${keyId}`);
  await page.click('form[action$="/disable"] button');
  await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${plaintext}` } });
  await context.close();
  const all = logged.join('');
  t.true(all.includes('api key revealed'), 'the gateway did log at debug level (the capture works)');
  t.false(all.includes(plaintext));
  t.false(all.includes(plaintext.slice(-64)), 'not even the secret part');
});

const errorOf = (page: string, name: string) => new RegExp(`id="err-${name}" role="alert">([^<]*)<`).exec(page)?.[1];

test.serial('an empty sign-in form shows each field\'s own message and counts nothing towards the lockout (people and operator)', async (t) => {
  const u = await newUser(gw, 'empty');
  const both = await postSignIn(gw.url, { email: '', password: '' });
  t.is(both.status, 400);
  const page = await both.text();
  t.is(errorOf(page, 'email'), 'Enter the email address you signed up with.');
  t.is(errorOf(page, 'password'), 'Enter your password.');
  t.notRegex(page, /wrong email or password/i);
  for (let i = 0; i < SIGN_IN_MAX_FAILURES + 1; i++) {
    const res = await postSignIn(gw.url, { email: u.email, password: '' });
    t.is(res.status, 400);
    t.is(errorOf(await res.text(), 'password'), 'Enter your password.');
  }
  const ok = await postSignIn(gw.url, { email: u.email, password: u.password });
  t.is(ok.status, 302, 'not locked out by empty submissions');
  t.regex(ok.headers.get('location') ?? '', /\/console\/overview/);

  for (let i = 0; i < SIGN_IN_MAX_FAILURES + 1; i++) {
    const res = await postSignIn(gw.url, { mode: 'operator', token: '' });
    t.is(res.status, 400);
    t.regex(errorOf(await res.text(), 'token') ?? '', /Paste the operator admin token/);
  }
  const operator = await postSignIn(gw.url, { mode: 'operator', token: gw.config.ADMIN_TOKEN });
  t.is(operator.status, 302, 'the operator is not locked out by empty submissions');
});

test.serial('a store that is briefly unavailable is said so in words at sign-in, with the trace id', async (t) => {
  const u = await newUser(gw, 'storedown');
  const people = gw.deps.people;
  const real = people.checkPassword;
  const failures = [
    () => Object.assign(new Error('connection 3 to 127.0.0.1:27017 closed'), { name: 'MongoNetworkError' }),
    () => new GatewayError('internal_error', 'a store is briefly unavailable; retry the request (trace id x)'),
  ];
  for (const failure of failures) {
    people.checkPassword = async () => {
      throw failure();
    };
    try {
      const res = await postSignIn(gw.url, { email: u.email, password: u.password });
      t.is(res.status, 503);
      const page = await res.text();
      t.regex(page, /The service is briefly unavailable; try again in a minute/);
      t.notRegex(page, /internal error|Something went wrong/i);
      const trace = res.headers.get('x-gateway-trace');
      t.truthy(trace);
      t.true(page.includes(`Trace id ${trace}`));
    } finally {
      people.checkPassword = real;
    }
  }
});

test.serial('a key name with a control or bidi character is refused on the key form with the field\'s own message', async (t) => {
  const u = await newUser(gw, 'badname');
  const s = await httpSession(gw.url, u.email, u.password);
  for (const name of ['prod\u202egnp.exe', 'two\nlines']) {
    const res = await s.post('/console/keys', { name, models_mode: 'all' });
    t.is(res.status, 400, name);
    t.regex(errorOf(await res.text(), 'name') ?? '', /no control characters/);
  }
  t.is(await gw.deps.db.ApiKey.countDocuments({ account_id: u.accountId, name: /gnp|lines/ }), 0);
});
