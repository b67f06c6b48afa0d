// Issue 27: the console as a new user meets it, at desktop and phone size: keys told apart and
// changed in place, money in one format, errors in words, a first-run overview, the account each
// page acts on, phone navigation and tables, usage paging, models search.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { startGateway, type TestGateway } from '../helpers/stack';
import { DESKTOP, PHONE, httpSession, launchBrowser, newPage, newUser, screenshots, signIn } from './browser';
import { consoleServices } from '../../gateway/console/services';

let gw: TestGateway;
let browser: Browser;

test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await gw?.close();
});

const chat = (key: string, model = 'gpt-4.1') =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 }),
  });

for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
  test(`${size}: first run, keys told apart and edited in place, re-enabled, money and errors in words`, async (t) => {
    const u = await newUser(gw, `first-${size}`);
    const { page, watch, context } = await newPage(browser, viewport);
    await signIn(page, gw.url, u.email, u.password);

    // First run: base URL, no key yet, four snippets with the right base URL each, empty states in words.
    t.is(await page.textContent('[data-testid=base-url]'), gw.url);
    t.truthy(await page.locator('[data-testid=create-key]').count());
    t.regex((await page.textContent('#snip-openai')) ?? '', new RegExp(`base_url="${gw.url}/v1"`));
    t.regex((await page.textContent('#snip-anthropic')) ?? '', new RegExp(`base_url="${gw.url}"`));
    t.regex((await page.textContent('#snip-google')) ?? '', new RegExp(`base_url="${gw.url}"`));
    t.regex((await page.textContent('#snip-curl')) ?? '', new RegExp(`${gw.url}/v1/chat/completions`));
    t.regex((await page.textContent('[data-testid=spend-empty]')) ?? '', /first call/);
    t.is(await page.textContent('[data-testid=balance]'), '$40.44');
    t.regex((await page.textContent('[data-testid=acting-on]')) ?? '', /personal account/);
    await screenshots(page, `p-overview-first-${size}`, t);

    // Create two keys with the same name: the list tells them apart by their tails.
    await page.goto(`${gw.url}/console/keys`);
    t.truthy(await page.locator('[data-testid=keys-empty]').count());
    // A cap that is no amount: the form's sentence, never the schema's or a field name.
    watch.expect(400);
    await page.fill('#f-name', 'app');
    await page.fill('#f-spend_cap_usd', 'lots');
    await page.click('#new-key button.primary');
    const capError = (await page.textContent('#err-spend_cap_usd')) ?? '';
    t.regex(capError, /amount in USD/);
    t.notRegex(capError, /spend_cap_usd|Invalid input|expected/);
    // "Only these" with none picked.
    await page.fill('#f-spend_cap_usd', '');
    await page.check('input[name=models_mode][value=some]');
    await page.click('#new-key button.primary');
    t.regex((await page.textContent('#err-allowed_models')) ?? '', /Pick at least one model/);
    watch.clearExpected();
    await page.check('input[name=models_mode][value=all]');
    await page.fill('#f-spend_cap_usd', '1234.5');
    await page.click('#new-key button.primary');
    const first = (await page.textContent('[data-testid=plaintext]'))!.trim();
    t.is(await page.textContent('[data-testid=key-cap]'), '$1,234.50');
    await page.goto(`${gw.url}/console/keys`);
    await page.fill('#f-name', 'app');
    await page.click('#new-key button.primary');
    const second = (await page.textContent('[data-testid=plaintext]'))!.trim();
    await page.goto(`${gw.url}/console/keys`);
    const tails = await page.locator('tr[data-key] [data-testid=key-tail]').allTextContents();
    t.is(tails.length, 2);
    t.deepEqual([...tails].sort(), [`${first.slice(0, 12)}…${first.slice(-4)}`, `${second.slice(0, 12)}…${second.slice(-4)}`].sort());
    await screenshots(page, `p-keys-${size}`, t);

    // Edit the first key in place: name, models, cap; the API follows at once.
    const [firstDoc] = (await gw.deps.keys.listByAccount(u.accountId)).filter((k) => k.tail === first.slice(-4));
    await page.goto(`${gw.url}/console/keys/${firstDoc._id}`);
    await page.click('#edit-key summary');
    await page.fill('#edit-key #f-name', 'app (gpt only)');
    await page.check('#edit-key input[name=models_mode][value=some]');
    await page.check('#edit-key input[name=allowed_models][value="gpt-4.1"]');
    await page.fill('#edit-key #f-spend_cap_usd', '2');
    await Promise.all([page.waitForURL(/saved=1/), page.click('#edit-key button.primary')]);
    t.is(await page.textContent('[data-testid=key-models]'), 'gpt-4.1');
    t.is(await page.textContent('[data-testid=key-cap]'), '$2.00');
    t.is((await chat(first, 'claude-sonnet-4-5')).status, 400);
    const ok = await chat(first);
    t.is(ok.status, 200);
    // Clearing the cap: "no cap".
    await page.click('#edit-key summary');
    await page.fill('#edit-key #f-spend_cap_usd', '');
    await Promise.all([page.waitForURL(/saved=1/), page.click('#edit-key button.primary')]);
    t.is(await page.textContent('[data-testid=key-cap]'), 'no cap');

    // Disable, then enable again: the key works again, and both are in the audit record with email and origin.
    await page.click('form[action$="/disable"] button');
    await page.waitForSelector('[data-testid=key-status]:has-text("disabled")');
    t.is((await chat(first)).status, 401);
    await Promise.all([page.waitForURL(/enabled=1/), page.click('form[action$="/enable"] button')]);
    t.is(await page.textContent('[data-testid=key-status]'), 'active');
    t.is((await chat(first)).status, 200);
    const audit = (await page.textContent('[data-testid=audit]')) ?? '';
    t.regex(audit, new RegExp(`Re-enabled by ${u.email.replace(/\./g, '\\.')} · from (::ffff:)?127\\.0\\.0\\.1`));
    t.regex(audit, /Changed name, models, spend cap/);
    t.notRegex(audit, /user:usr_|user:[a-z0-9]{8}/);
    await screenshots(page, `p-key-detail-${size}`, t);

    // Money: the per-call cost is small, shown as "< $0.01" or with up to 4 decimals; balances with 2 and a $.
    await page.goto(`${gw.url}/console/usage`);
    const costs = await page.locator('table.usage tbody td:nth-child(7)').allTextContents();
    t.true(costs.length >= 2);
    for (const c of costs) t.regex(c.trim(), /^(< \$0\.01|\$\d{1,3}(,\d{3})*\.\d{2,4})$/);
    const tokens = (await page.textContent('table.usage tbody td:nth-child(5)')) ?? '';
    t.regex(tokens, /\d+ in \/ \d+ out/);
    // One time zone: the browser's, UTC on hover.
    const time = page.locator('table.usage tbody time').first();
    t.regex((await time.getAttribute('title')) ?? '', /UTC$/);
    t.not(await time.getAttribute('data-local'), null, 'rewritten in the browser\'s zone');
    t.notRegex((await time.textContent()) ?? '', /^\d{4}-\d{2}-\d{2} /);
    await screenshots(page, `p-usage-${size}`, t);
    await page.goto(`${gw.url}/console/overview`);
    t.regex((await page.textContent('[data-testid=spend-30d]')) ?? '', /^(< \$0\.01|\$\d+\.\d{2,4})$/);
    await screenshots(page, `p-overview-${size}`, t);
    watch.assertClean(t);
    await context.close();
  });
}

test('phone: the navigation shows it scrolls and keeps the current tab in view; tables become cards', async (t) => {
  const u = await newUser(gw, 'phone');
  const { page, watch, context } = await newPage(browser, PHONE);
  await signIn(page, gw.url, u.email, u.password);
  await page.goto(`${gw.url}/console/models`);
  const nav = (await page.evaluate(`(() => {
    const n = document.querySelector('nav.main');
    const r = n.querySelector('[aria-current=page]').getBoundingClientRect();
    return { scrolls: n.scrollWidth > n.clientWidth, left: r.left, right: r.right, width: window.innerWidth, hint: n.classList.contains('more-left') || n.classList.contains('more-right') };
  })()`)) as { scrolls: boolean; left: number; right: number; width: number; hint: boolean };
  t.true(nav.scrolls);
  t.true(nav.left >= 0 && nav.right <= nav.width, `the current tab is in view (${nav.left}..${nav.right})`);
  t.true(nav.hint, 'an edge shadow says there is more');
  // The models table is cards: each cell carries its column's name; the context column reads in words.
  const cell = page.locator('tr[data-model] td[data-label="Context"]').first();
  t.truthy(await cell.count());
  t.true(await cell.isVisible());
  await screenshots(page, 'p-models-phone', t);
  // An empty table's one wide cell ("No keys yet", "No calls yet") is not labelled as the first column.
  await page.goto(`${gw.url}/console/usage`);
  const empty = page.locator('table.stack td[colspan]').first();
  t.truthy(await empty.count());
  t.is(await page.evaluate(`getComputedStyle(document.querySelector('table.stack td[colspan]'), '::before').content`), 'none', 'no "When" before "No calls yet"');
  // A refused form below the fold (the key form under three key cards): the page opens at its first error, the field focused.
  for (let i = 0; i < 3; i++) await gw.newKey(u.accountId);
  await page.goto(`${gw.url}/console/keys`);
  await page.fill('#new-key input[name=name]', 'phone');
  await page.fill('#new-key input[name=spend_cap_usd]', 'lots');
  watch.expect(400);
  await Promise.all([page.waitForURL(/\/console\/keys$/), page.click('#new-key button[type=submit]')]);
  await page.waitForLoadState('load');
  watch.clearExpected();
  const seen = (await page.evaluate(`(() => { const r = document.querySelector('#err-spend_cap_usd').getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, height: innerHeight, focused: document.activeElement && document.activeElement.id }; })()`)) as { top: number; bottom: number; height: number; focused: string };
  t.true(seen.top >= 0 && seen.bottom <= seen.height, `the error is on screen (${seen.top}..${seen.bottom} of ${seen.height})`);
  t.is(seen.focused, 'f-spend_cap_usd');
  watch.assertClean(t);
  await context.close();
});

test('models: search and capability filters, context sizes and prices in words', async (t) => {
  const u = await newUser(gw, 'models');
  const { page, watch, context } = await newPage(browser);
  await signIn(page, gw.url, u.email, u.password);
  await page.goto(`${gw.url}/console/models`);
  const text = (await page.textContent('table.models')) ?? '';
  t.notRegex(text, /threshold_pixels|input_per_1m/);
  t.regex(text, /\$\d+\.\d{2,4} per 1M input tokens/);
  t.regex(text, /\d+K tokens|\d+(\.\d)?M tokens/);
  const total = Number(await page.textContent('[data-testid=model-count]'));
  await page.fill('#f-q', 'gpt-image');
  const found = Number(await page.textContent('[data-testid=model-count]'));
  t.true(found >= 1 && found < total);
  t.true(await page.locator('tr[data-model="gpt-image-1"]').isVisible());
  await page.fill('#f-q', '');
  await page.check('input[name=cap][value=vision]');
  const vision = await page.locator('tr[data-model]:visible').count();
  t.true(vision >= 1 && vision < total);
  // Without JavaScript the same filters work on the server.
  await page.goto(`${gw.url}/console/models?q=gpt-image`);
  t.is(Number(await page.textContent('[data-testid=model-count]')), found);
  await screenshots(page, 'p-models', t);
  watch.assertClean(t);
  await context.close();
});

test('usage pages by cursor; the operator signs in on a page of their own; every page says which account it acts on', async (t) => {
  const u = await newUser(gw, 'paging');
  const key = await gw.newKey(u.accountId);
  for (let i = 0; i < 55; i++) t.is((await chat(key.key)).status, 200);
  const { page, watch, context } = await newPage(browser);
  await signIn(page, gw.url, u.email, u.password);
  await page.goto(`${gw.url}/console/usage`);
  t.is(await page.locator('table.usage tbody tr').count(), 50);
  const firstPage = await page.locator('table.usage tbody tr td:last-child code').allTextContents();
  await page.click('[data-testid=older]');
  const second = await page.locator('table.usage tbody tr td:last-child code').allTextContents();
  t.is(second.length, 5);
  t.is(new Set([...firstPage, ...second]).size, 55, 'no row twice, none lost');
  // Filters travel with the cursor, and an impossible filter says so in words.
  await page.goto(`${gw.url}/console/usage?model=claude-sonnet-4-5`);
  t.regex((await page.textContent('table.usage')) ?? '', /No calls match these filters/);
  watch.expect(400);
  await page.goto(`${gw.url}/console/usage?from=yesterday`);
  t.regex((await page.textContent('#err-from')) ?? '', /Pick a start date/);
  watch.clearExpected();
  for (const path of ['keys', 'usage', 'tasks', 'kb', 'topup']) {
    await page.goto(`${gw.url}/console/${path}`);
    t.regex((await page.textContent('[data-testid=acting-on]')) ?? '', /Acting on .*personal account/, path);
  }
  await page.goto(`${gw.url}/console/tasks`);
  await screenshots(page, 'p-tasks', t);
  watch.assertClean(t);
  await context.close();

  const op = await newPage(browser, PHONE);
  await op.page.goto(`${gw.url}/console/signin`);
  t.is(await op.page.locator('#f-token').count(), 0, 'no admin token field on the people sign-in');
  await screenshots(op.page, 'p-signin', t);
  await op.page.click('a[href^="/console/signin/operator"]');
  await screenshots(op.page, 'p-operator-signin', t);
  await op.page.fill('#f-token', gw.config.ADMIN_TOKEN);
  await Promise.all([op.page.waitForURL(/\/console\/overview/), op.page.click('#operator-signin button')]);
  t.regex((await op.page.textContent('[data-testid=acting-on]')) ?? '', /Acting on/);
  op.watch.assertClean(t);
  await op.context.close();
});

// Plain HTTP (no browser): what the audit of the console found.

const plaintextOf = (page: string) => /data-testid="plaintext">([^<]+)</.exec(page)?.[1];
const fieldError = (page: string, name: string) => new RegExp(`id="err-${name}" role="alert">([^<]*)<`).exec(page)?.[1];

test('creating a key redirects (303) to a page that shows its plaintext once; a reload creates nothing and shows it no more; reveal the same', async (t) => {
  const u = await newUser(gw, 'prg');
  const s = await httpSession(gw.url, u.email, u.password);
  const created = await s.post('/console/keys', { name: 'once', models_mode: 'all' });
  t.is(created.status, 303);
  const location = created.headers.get('location') ?? '';
  const keyId = /^\/console\/keys\/([^/?]+)\?created=1$/.exec(location)?.[1];
  t.truthy(keyId, location);
  const plaintext = plaintextOf(await (await s.get(location)).text());
  t.regex(plaintext ?? '', /^sk-[a-z0-9]{8}-[0-9a-f]{64}$/);
  // The reload: the same GET, no second key, the plaintext gone, and a word on where to see it again.
  const reload = await s.get(location);
  t.is(reload.status, 200);
  const again = await reload.text();
  t.false(again.includes(plaintext!));
  t.regex(again, /shown once .*Reveal key/);
  t.is((await gw.deps.keys.listByAccount(u.accountId)).length, 1);

  // Reveal: one audit line per POST; its page shows the key once, a reload writes nothing and shows nothing.
  const reveals = async () => (await consoleServices(gw.deps).audit.forTarget(keyId!, 50)).filter((a) => a.action === 'key.reveal').length;
  const revealed = await s.post(`/console/keys/${keyId}/reveal`);
  t.is(revealed.status, 303);
  const shown = revealed.headers.get('location') ?? '';
  t.is(shown, `/console/keys/${keyId}?revealed=1`);
  t.is(plaintextOf(await (await s.get(shown)).text()), plaintext);
  t.is(plaintextOf(await (await s.get(shown)).text()), undefined);
  t.is(await reveals(), 1);
  // Another session of the same user does not get this session's one-time view.
  const other = await httpSession(gw.url, u.email, u.password);
  await s.post(`/console/keys/${keyId}/reveal`);
  t.is(plaintextOf(await (await other.get(shown)).text()), undefined);
  t.is(await reveals(), 2);
});

test('the key form shows every field\'s error at once', async (t) => {
  const u = await newUser(gw, 'allerrors');
  const s = await httpSession(gw.url, u.email, u.password);
  const res = await s.post('/console/keys', { name: '', models_mode: 'some', expires_at: '2001-01-01T00:00', spend_cap_usd: 'lots' });
  t.is(res.status, 400);
  const page = await res.text();
  t.regex(fieldError(page, 'name') ?? '', /Give the key a name/);
  t.regex(fieldError(page, 'allowed_models') ?? '', /Pick at least one model/);
  t.regex(fieldError(page, 'expires_at') ?? '', /in the future/);
  t.regex(fieldError(page, 'spend_cap_usd') ?? '', /amount in USD/);
  t.is((await gw.deps.keys.listByAccount(u.accountId)).length, 0);
  // The edit form too.
  const key = await gw.newKey(u.accountId);
  const edit = await s.post(`/console/keys/${key.id}/edit`, { name: '', models_mode: 'all', spend_cap_usd: 'lots' });
  t.is(edit.status, 400);
  const editPage = await edit.text();
  t.truthy(fieldError(editPage, 'name'));
  t.truthy(fieldError(editPage, 'spend_cap_usd'));
});

test('a spend cap with more than 2 decimals is shown exactly, and saving the edit form untouched keeps it', async (t) => {
  const u = await newUser(gw, 'exactcap');
  const s = await httpSession(gw.url, u.email, u.password);
  const created = await s.post('/console/keys', { name: 'cap', models_mode: 'all', spend_cap_usd: '12.345' });
  t.is(created.status, 303);
  const keyId = /\/console\/keys\/([^/?]+)/.exec(created.headers.get('location') ?? '')?.[1];
  const [k] = await gw.deps.keys.listByAccount(u.accountId);
  t.is(k.spend_cap_nano, 12_345_000_000);
  const detail = await (await s.get(`/console/keys/${keyId}`)).text();
  const shown = /data-testid="key-cap">(.*?)<\/dd>/.exec(detail)?.[1]?.replace(/<[^>]+>/g, '');
  t.is(shown, '$12.345', 'a cap is a limit: not rounded up to $12.35');
  const input = /name="spend_cap_usd"[^>]*value="([^"]*)"|value="([^"]*)"[^>]*name="spend_cap_usd"/.exec(detail);
  t.is(input?.[1] ?? input?.[2], '12.345', 'the edit form holds the exact cap');
  // Save the edit form as it is shown: the cap stays what it was.
  const saved = await s.post(`/console/keys/${keyId}/edit`, { name: 'cap', models_mode: 'all', spend_cap_usd: input?.[1] ?? input?.[2] ?? '' });
  t.is(Math.floor(saved.status / 100), 3, 'saved, redirected');
  t.is((await gw.deps.keys.listByAccount(u.accountId))[0].spend_cap_nano, 12_345_000_000);
  // A cap under a cent is not "$0.00".
  await s.post(`/console/keys/${keyId}/edit`, { name: 'cap', models_mode: 'all', spend_cap_usd: '0.004' });
  const list = await (await s.get('/console/keys')).text();
  t.false(/<td class="num"><span class="money"[^>]*>\$0\.00<\/span><\/td>/.test(list), 'a 0.004 cap is not written $0.00');
  t.true(list.includes('$0.004'));
});

test('spend by model and a key\'s spend are written as costs (up to 4 decimals, "< $0.01" under a cent), as the headline', async (t) => {
  const u = await newUser(gw, 'subcent');
  const key = await gw.newKey(u.accountId);
  t.is((await chat(key.key)).status, 200);
  const s = await httpSession(gw.url, u.email, u.password);
  const money = (page: string, where: RegExp) => where.exec(page)?.[1]?.replace(/<[^>]+>/g, '').replace(/&lt;/g, '<').trim();
  const overview = await (await s.get('/console/overview')).text();
  const headline = money(overview, /data-testid="spend-30d">(.*?)<\/p>/);
  const byModel = money(overview, /<table class="bars">[\s\S]*?<td class="num">(.*?)<\/td>/);
  t.regex(headline ?? '', /^(< \$0\.01|\$\d+\.\d{2,4})$/);
  t.is(byModel, headline, 'one model: its row is the headline, in the same format');
  t.not(byModel, '$0.00');
  const list = money(await (await s.get('/console/keys')).text(), /data-testid="key-spent">(.*?)<\/td>/);
  const detail = money(await (await s.get(`/console/keys/${key.id}`)).text(), /data-testid="key-spent">(.*?)<\/dd>/);
  t.truthy(detail);
  t.is(list, detail);
});

test('filter dates that are not on the calendar, or a start after the end, are a 400 in words (tasks, usage, the CSV export)', async (t) => {
  const u = await newUser(gw, 'dates');
  const s = await httpSession(gw.url, u.email, u.password);
  for (const [path, words] of [
    ['/console/tasks?from=2026-13-45', /Pick a start date/],
    ['/console/tasks?to=2026-02-30', /Pick an end date/],
    ['/console/usage?from=2026-13-45', /Pick a start date/],
    ['/console/usage?to=2026-02-30', /Pick an end date/],
    ['/console/usage/export.csv?from=2026-13-45', /Pick a start date/],
    ['/console/usage/export.csv?to=2026-13-45', /Pick an end date/],
    ['/console/tasks?from=2026-05-02&to=2026-05-01', /start date is after the end date/],
    ['/console/usage?from=2026-05-02&to=2026-05-01', /start date is after the end date/],
  ] as const) {
    const res = await s.get(path);
    t.is(res.status, 400, path);
    const page = await res.text();
    t.regex(page, words, path);
    if (/after the end/.test(String(words))) t.notRegex(page, /Pick a start date/, path);
  }
  // A real range still answers.
  t.is((await s.get('/console/tasks?from=2026-05-01&to=2026-05-01')).status, 200);
  t.is((await s.get('/console/usage?from=2024-02-29&to=2024-03-01')).status, 200);
});

test('top-up: each refused amount says why', async (t) => {
  const u = await newUser(gw, 'topupwords');
  const s = await httpSession(gw.url, u.email, u.password);
  for (const [amount, why] of [
    ['', /Enter an amount/],
    ['lots', /as a number/],
    ['10', /Enter at least \$134\.80: that is the minimum/],
    ['-200', /Enter at least \$134\.80: that is the minimum/],
    ['150.255', /at most 2 decimals/],
  ] as const) {
    const res = await s.post('/console/topup', { amount_usd: amount });
    t.is(res.status, 400, amount);
    t.regex(fieldError(await res.text(), 'amount_usd') ?? '', why, amount);
  }
});
