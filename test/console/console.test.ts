import test from 'ava';
import type { Browser } from 'playwright-core';
import { startGateway, type TestGateway } from '../helpers/stack';
import { signStripePayload } from '../../capabilities/billing/stripe';
import { webhookSecret } from '../../capabilities/billing/select';
import { launchBrowser, newPage, newUser, screenshots, signIn } from './browser';

let gw: TestGateway;
let browser: Browser;

test.before(async () => {
  gw = await startGateway({ TEMPORAL_UI_URL: 'http://127.0.0.1:18233' }, { simulator: true, worker: true });
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

test('a user signs in, creates a key, uses it, reveals it (audited), finds the call, disables it', async (t) => {
  const u = await newUser(gw, 'keys');
  const { page, watch, context } = await newPage(browser);
  await signIn(page, gw.url, u.email, u.password);
  t.is(await page.textContent('[data-testid=balance]'), '$40.44');

  await page.goto(`${gw.url}/console/keys`);
  // The API's validation, next to the field: a spend cap that is no amount.
  watch.expect(400);
  await page.fill('#f-name', 'ci key');
  await page.fill('#f-spend_cap_usd', 'lots');
  await page.click('#new-key button.primary');
  t.regex((await page.textContent('#err-spend_cap_usd')) ?? '', /amount/);
  watch.clearExpected();

  await page.fill('#f-spend_cap_usd', '5');
  await page.check('input[name=models_mode][value=some]');
  await page.check('input[name=allowed_models][value="gpt-4.1"]');
  await page.click('#new-key button.primary');
  const plaintext = (await page.textContent('[data-testid=plaintext]'))!.trim();
  t.regex(plaintext, /^sk-[a-z0-9]{8}-[0-9a-f]{64}$/);
  const keyUrl = new URL(page.url());
  await screenshots(page, 'key-created', t);

  // The key works from the API, for its allowed model only.
  const ok = await chat(plaintext);
  t.is(ok.status, 200);
  const requestId = ok.headers.get('x-gateway-trace')!;
  t.truthy(requestId);
  t.is((await chat(plaintext, 'claude-sonnet-4-5')).status, 400);

  // Detail page: reveal (audited).
  const keyId = (await gw.deps.keys.listByAccount(u.accountId))[0]._id;
  await page.goto(`${gw.url}/console/keys/${keyId}`);
  t.is(await page.locator('[data-testid=plaintext]').count(), 0, 'the plaintext is not on the page until revealed');
  await page.click('form[action$="/reveal"] button');
  t.is((await page.textContent('[data-testid=plaintext]'))!.trim(), plaintext);
  t.regex((await page.textContent('[data-testid=audit]')) ?? '', new RegExp(`Revealed the key by ${u.email.replace(/[.]/g, '\\.')} · from `));
  await screenshots(page, 'key-detail', t);

  // Call history on the key and the call-log lookup by request id.
  await page.goto(`${gw.url}/console/keys/${keyId}`);
  t.true(((await page.textContent('main')) ?? '').includes(requestId));
  await page.goto(`${gw.url}/console/usage`);
  await page.fill('#f-id', requestId);
  await page.click('form.lookup button');
  t.is(await page.textContent('[data-testid=request-id]'), requestId);
  t.is(await page.getAttribute('[data-testid=call-status]', 'data-status'), 'success');
  await screenshots(page, 'call', t);

  // Usage filters and the CSV export with them.
  await page.goto(`${gw.url}/console/usage?model=gpt-4.1&status=success`);
  t.true(((await page.textContent('table')) ?? '').includes(requestId));
  await screenshots(page, 'usage', t);
  const csv = await context.request.get(`${gw.url}/console/usage/export.csv?model=gpt-4.1`);
  t.is(csv.status(), 200);
  const lines = (await csv.text()).trim().split('\n');
  t.true(lines[0].startsWith('id,created_at,key_name,key_prefix,model,status,error_code'));
  t.true(lines.some((l) => l.includes(requestId)));
  await page.goto(`${gw.url}/console/usage?model=claude-sonnet-4-5&status=success`);
  t.false(((await page.textContent('table')) ?? '').includes(requestId));

  // Disable: the API refuses the key on the next call.
  await page.goto(`${gw.url}/console/keys/${keyId}`);
  await page.click('form[action$="/disable"] button');
  await page.waitForSelector('[data-testid=key-status]:has-text("disabled")');
  const refused = await chat(plaintext);
  t.is(refused.status, 401);
  t.regex(JSON.stringify(await refused.json()), /revoked/);

  // Delete: the API refuses it too, and the list no longer shows it.
  await page.click('form[action$="/delete"] button');
  await page.waitForSelector('[data-testid=key-status]:has-text("deleted")');
  t.is((await chat(plaintext)).status, 401);

  // A legacy (hash-only) key says it cannot be revealed, and offers no reveal.
  const legacy = await gw.admin('POST', `/accounts/${u.accountId}/keys/import-legacy`, { name: 'old', key: `sk-mgateway-${'ab'.repeat(32)}` });
  t.is(legacy.status, 201);
  await page.goto(`${gw.url}/console/keys/${legacy.body.id}`);
  t.regex((await page.textContent('[data-testid=legacy]')) ?? '', /cannot be revealed/);
  t.is(await page.locator('form[action$="/reveal"]').count(), 0);

  // Overview: the spend chart (uPlot) drew, and the spend shows.
  await page.goto(`${gw.url}/console/overview`);
  await page.waitForSelector('#spend-chart canvas');
  t.not(await page.textContent('[data-testid=spend-30d]'), '$0.00');
  await screenshots(page, 'overview', t);
  await page.goto(`${gw.url}/console/keys`);
  await screenshots(page, 'keys', t);
  await page.goto(`${gw.url}/console/models`);
  t.true(((await page.textContent('table')) ?? '').includes('gpt-image-1'));
  await screenshots(page, 'models', t);
  watch.assertClean(t);
  await context.close();
});

test('a top-up goes through the stand-in checkout and its signed webhook, once', async (t) => {
  const u = await newUser(gw, 'topup');
  const { page, watch, context } = await newPage(browser);
  await signIn(page, gw.url, u.email, u.password);
  await page.goto(`${gw.url}/console/topup`);
  watch.expect(400);
  await page.fill('#f-amount_usd', '100');
  await page.click('form[action="/console/topup"] button.primary');
  t.regex((await page.textContent('#err-amount_usd')) ?? '', /at least \$134\.80/);
  watch.clearExpected();
  await screenshots(page, 'topup', t);

  await page.fill('#f-amount_usd', '150');
  await Promise.all([page.waitForURL(/\/_processor\/checkout\//), page.click('form[action="/console/topup"] button.primary')]);
  t.is(await page.textContent('[data-testid=checkout-amount]'), '$150.00');
  await screenshots(page, 'checkout', t);
  const sessionId = new URL(page.url()).pathname.split('/').pop()!;
  await Promise.all([page.waitForURL(/\/console\/topup\?topup=/), page.click('form button')]);
  await page.waitForSelector('[data-testid=topup-done]');
  t.is(await page.textContent('[data-testid=balance]'), '$190.44');

  // The processor redelivers the event: nothing more is credited.
  const cs = await gw.deps.db.conn.collection('processor_checkouts').findOne({ _id: sessionId as never });
  t.truthy(cs);
  const secret = webhookSecret(gw.config)!;
  const body = JSON.stringify({ id: `evt_${sessionId}_again`, object: 'event', type: 'checkout.session.completed', data: { object: { id: sessionId, client_reference_id: cs!.topup_id, amount_total: cs!.amount_cents, currency: 'usd', metadata: { topup_id: cs!.topup_id, account_id: u.accountId }, payment_status: 'paid' } } });
  const again = await fetch(`${gw.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signStripePayload(body, secret) }, body });
  t.is(again.status, 200);
  t.is(((await again.json()) as { outcome: string }).outcome, 'already credited');
  t.is(await gw.deps.wallet.balance(u.accountId), 190_440_000_000);
  // A forged or unsigned event credits nothing.
  const forgedBody = body.replace('_again', '_forged');
  const forged = await fetch(`${gw.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signStripePayload(forgedBody, 'whsec_not-the-secret-at-all') }, body: forgedBody });
  t.is(forged.status, 400);
  t.is(await gw.deps.wallet.balance(u.accountId), 190_440_000_000);
  watch.assertClean(t);
  await context.close();
});

test('a finished image task shows its preview; tasks list live status', async (t) => {
  const u = await newUser(gw, 'tasks');
  const key = await gw.newKey(u.accountId);
  const res = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a red fox', async: true }),
  });
  t.true(res.status < 300, `image submitted (${res.status})`);
  const task = (await res.json()) as { id: string };
  const { page, watch, context } = await newPage(browser);
  await signIn(page, gw.url, u.email, u.password);
  await page.goto(`${gw.url}/console/tasks`);
  t.true(((await page.textContent('table')) ?? '').includes(task.id));
  await page.goto(`${gw.url}/console/tasks/${task.id}`);
  // Live status: the detail refreshes itself until the task is final.
  await page.waitForSelector('[data-testid=task-status]:has-text("succeeded")', { timeout: 60_000 });
  const img = page.locator('.previews img').first();
  await img.waitFor();
  await page.waitForFunction('(() => { const i = document.querySelector(".previews img"); return !!i && i.complete && i.naturalWidth > 0; })()');
  await screenshots(page, 'task', t);
  t.is(await page.locator('a[href*="/workflows/"]').count(), 0, 'no Temporal UI link for users');
  await page.goto(`${gw.url}/console/tasks`);
  await screenshots(page, 'tasks', t);
  watch.assertClean(t);
  await context.close();

  // The operator sees a link to the task's workflow in the Temporal UI.
  const op = await newPage(browser);
  await op.page.goto(`${gw.url}/console/signin`);
  await op.page.click('a[href^="/console/signin/operator"]');
  await op.page.fill('#f-token', gw.config.ADMIN_TOKEN);
  await Promise.all([op.page.waitForURL(/\/console\/overview/), op.page.click('#operator-signin button')]);
  await op.page.goto(`${gw.url}/console/tasks/${task.id}`);
  t.is(await op.page.getAttribute('a[href*="/workflows/"]', 'href'), `http://127.0.0.1:18233/namespaces/default/workflows/${task.id}`);
  op.watch.assertClean(t);
  await op.context.close();

  // Once the hosted links have expired, they are shown as text, not loaded.
  await gw.deps.db.Task.updateOne({ _id: task.id }, { $set: { 'result.links_expired': true } });
  const again = await newPage(browser);
  await signIn(again.page, gw.url, u.email, u.password);
  await again.page.goto(`${gw.url}/console/tasks/${task.id}`);
  t.is(await again.page.locator('.previews img').count(), 0);
  t.regex((await again.page.textContent('.expired-links')) ?? '', /http/);
  again.watch.assertClean(t);
  await again.context.close();
});

test('an operator signs in with the admin token and sees every account', async (t) => {
  const u = await newUser(gw, 'seen');
  await gw.newAccount({ name: 'newer' });
  const { page, watch, context } = await newPage(browser);
  await page.goto(`${gw.url}/console/signin/operator`);
  await page.fill('#f-token', gw.config.ADMIN_TOKEN);
  await Promise.all([page.waitForURL(/\/console\/overview/), page.click('#operator-signin button')]);
  await page.goto(`${gw.url}/console/accounts`);
  t.true(((await page.textContent('table')) ?? '').includes(u.accountId));
  await page.click(`form:has(input[value="${u.accountId}"]) button`);
  await page.goto(`${gw.url}/console/overview`);
  t.is(await page.inputValue('#account-switch'), u.accountId);
  await screenshots(page, 'operator-accounts', t);
  watch.assertClean(t);
  await context.close();
});

test('the first page loads under 200 KB transferred, every asset from the gateway itself', async (t) => {
  const u = await newUser(gw, 'weight');
  const { page, watch, context } = await newPage(browser);
  const origins = new Set<string>();
  page.on('request', (r) => origins.add(new URL(r.url()).origin));
  await signIn(page, gw.url, u.email, u.password);
  // A cold cache: a new context, the session cookie copied over.
  const cold = await browser.newContext({ viewport: { width: 390, height: 844 } });
  await cold.addCookies(await context.cookies(gw.url));
  const p2 = await cold.newPage();
  for (const path of ['/console/signin', '/console/overview']) {
    const c = path === '/console/signin' ? await browser.newContext() : cold;
    const p = path === '/console/signin' ? await c.newPage() : p2;
    await p.goto(`${gw.url}${path}`, { waitUntil: 'load' });
    const bytes = (await p.evaluate(`(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      return performance.getEntriesByType('resource').reduce((n, e) => n + e.transferSize, nav.transferSize);
    })()`)) as number;
    t.log(`${path}: ${bytes} bytes transferred`);
    t.true(bytes > 1000 && bytes < 200 * 1024, `${path} transferred ${bytes} bytes`);
    if (c !== cold) await c.close();
  }
  t.deepEqual([...origins], [gw.url], 'nothing from a CDN');
  await cold.close();
  watch.assertClean(t);
  await context.close();
});

test('a document uploaded to a knowledge base builds into pages, with live progress', async (t) => {
  const u = await newUser(gw, 'kb');
  const { page, watch, context } = await newPage(browser);
  await signIn(page, gw.url, u.email, u.password);
  await page.goto(`${gw.url}/console/kb`);
  await page.click('a[href="/console/kb/default"]');
  // No file chosen: the error is shown next to the field.
  watch.expect(400);
  await page.click('#upload button.primary');
  t.regex((await page.textContent('#err-file')) ?? '', /file/);
  watch.clearExpected();
  await page.setInputFiles('#f-file', {
    name: 'foxes.md', mimeType: 'text/markdown',
    buffer: Buffer.from('# Red foxes\n\nThe red fox lives in forests.\n\n## Diet\n\nFoxes eat rabbits and berries. See [[Red foxes]].\n'),
  });
  await Promise.all([page.waitForURL(/\/console\/kb\/default\?uploaded=/), page.click('#upload button.primary')]);
  t.true(((await page.textContent('#doc-rows')) ?? '').includes('foxes.md'));
  // The rows refresh themselves (htmx) until the build is final.
  await page.waitForSelector('[data-testid=build-state]:has-text("succeeded")', { timeout: 90_000 });
  // ...and until the page count is final (the build live), not only the build state.
  await page.waitForFunction('/^\\d+$/.test(document.querySelector("[data-testid=page-count]").textContent.trim())', undefined, { timeout: 30_000 });
  t.is(await page.locator('[data-testid=upload-notice]').count(), 1, 'the upload is confirmed');
  const pages = Number(await page.textContent('#doc-rows tr td:nth-child(4)'));
  t.true(pages > 0, `the build made ${pages} pages`);
  await screenshots(page, 'knowledge', t);
  // Search it in the browser: the hit, its snippet and score.
  await page.reload();
  await page.fill('#f-q', 'rabbits berries');
  await Promise.all([page.waitForURL(/\?q=/), page.click('form[role=search] button')]);
  const results = (await page.textContent('[data-testid=search-results]')) ?? '';
  t.regex(results, /[1-9]\d* results? for/);
  t.regex(results, /rabbits/i);
  t.regex(results, /score \d/);
  await screenshots(page, 'knowledge-search', t);
  // Browse the hit: tags, links, backlinks, the source link.
  await Promise.all([page.waitForURL(/\/pages\//), page.click('[data-testid=search-results] ol.hits li a')]);
  t.true(((await page.textContent('[data-testid=source-link]')) ?? '').includes('foxes.md'));
  t.truthy(await page.$('h2:has-text("Links")'));
  t.truthy(await page.$('h2:has-text("Linked from")'));
  await screenshots(page, 'knowledge-page', t);
  // The source link serves the uploaded file; a resolved link leads to a page whose backlinks name this one.
  const source = await fetch((await page.getAttribute('[data-testid=source-link]', 'href'))!);
  t.is(source.status, 200);
  t.regex(await source.text(), /red fox lives in forests/);
  const from = (await page.textContent('h1')) ?? '';
  await Promise.all([page.waitForURL(/\/pages\//), page.click('h2:has-text("Links") + ul a')]);
  t.true(((await page.textContent('h2:has-text("Linked from") + ul')) ?? '').includes(from), `backlinks name ${from}`);
  // Tags with counts on the base page.
  await page.goto(`${gw.url}/console/kb/default`);
  t.regex((await page.textContent('p.tags')) ?? '', /\(\d+\)/);
  watch.assertClean(t);
  await context.close();
});
