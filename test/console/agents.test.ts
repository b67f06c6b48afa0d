import test from 'ava';
import type { Browser } from 'playwright-core';
import type { TestGateway } from '../helpers/stack';
import { startAgentGateway } from '../agents/helpers';
import { post, usageRow } from '../chat/helpers';
import { httpSession, launchBrowser, newPage, newUser, screenshots, signIn } from './browser';

let gw: TestGateway;
let browser: Browser;

test.before(async () => {
  gw = await startAgentGateway();
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await gw?.close();
});

test('an owner creates and publishes an agent; a member requests a key; the owner approves it with a cap; the member sees it', async (t) => {
  const ent = await gw.newAccount({ name: 'Acme console', enterprise: true });
  const owner = await newUser(gw, 'agent-owner');
  const member = await newUser(gw, 'agent-member');
  const outsider = await newUser(gw, 'agent-outsider');
  await gw.deps.people.setMember(ent.id, owner.id, 'owner');
  await gw.deps.people.setMember(ent.id, member.id, 'member');
  const base = await gw.deps.kbBases.create(ent.id, { name: 'Fox facts', readers: 'all' });

  // The owner creates a draft agent, then publishes it.
  const o = await newPage(browser);
  await signIn(o.page, gw.url, owner.email, owner.password);
  await o.page.goto(`${gw.url}/console/agents?enterprise=${ent.id}`);
  // The API's validation next to the field: no name.
  o.watch.expect(400);
  await o.page.fill('#f-system_prompt', 'You answer questions about foxes.');
  await o.page.click('#new-agent button.primary');
  t.truthy(await o.page.textContent('#err-name'));
  o.watch.clearExpected();
  await o.page.fill('#f-name', 'Fox helper');
  await o.page.fill('#f-system_prompt', 'You answer questions about foxes.');
  await Promise.all([o.page.waitForURL(/\/console\/agents\/[^/?]+$/), o.page.click('#new-agent button.primary')]);
  t.is(await o.page.textContent('[data-testid=agent-state]'), 'draft');
  await Promise.all([o.page.waitForURL(/\/console\/agents\/[^/?]+$/), o.page.click('form[action$="/publish"] button')]);
  t.is(await o.page.textContent('[data-testid=agent-state]'), 'published');
  const agentUrl = o.page.url();
  // Attach a team base.
  await o.page.selectOption('#f-kb', base.kb_id);
  await Promise.all([o.page.waitForURL(/\/console\/agents\/[^/?]+$/), o.page.click('form[action$="/bases"] button')]);
  t.regex((await o.page.textContent('[data-testid=agent-bases]')) ?? '', new RegExp(`Fox facts\\s*${base.kb_id}`), 'an attached base is listed by its name');
  // The enterprise's own base too: listed by the name the knowledge page gives it; with nothing left to attach, no empty picker.
  await o.page.selectOption('#f-kb', 'default');
  await Promise.all([o.page.waitForURL(/\/console\/agents\/[^/?]+$/), o.page.click('form[action$="/bases"] button')]);
  t.regex((await o.page.textContent('[data-testid=agent-bases]')) ?? '', /Enterprise base\s*default/);
  t.is(await o.page.$('#f-kb'), null, 'no attach form when every base is attached');
  t.truthy(await o.page.$('[data-testid=agent-bases-none-left]'));
  await screenshots(o.page, 'agent-detail-all-bases', t);
  await Promise.all([o.page.waitForURL(/\/console\/agents\/[^/?]+$/), o.page.click('form[action$="/bases/default/detach"] button')]);
  t.truthy(await o.page.$('#f-kb'), 'the form is back once a base can be attached');
  t.regex((await o.page.textContent('[data-testid=agent-usage]')) ?? '', /0 requests/);
  await screenshots(o.page, 'agent-detail', t);

  // The member sees the published agent (not its admin page) and requests a key.
  const m = await newPage(browser);
  await signIn(m.page, gw.url, member.email, member.password);
  await m.page.goto(`${gw.url}/console/agents`);
  t.true(((await m.page.textContent('table')) ?? '').includes('Fox helper'));
  t.is(await m.page.$('#new-agent'), null, 'members cannot create agents');
  await m.page.fill('tr[data-agent] input[name=name]', 'my fox key');
  await Promise.all([m.page.waitForURL(/\/console\/agents/), m.page.click('tr[data-agent] form button')]);
  t.regex((await m.page.textContent('tr[data-key]')) ?? '', /my fox key[\s\S]*requested/);
  // The admin page of the agent is not theirs: 404.
  m.watch.expect(404);
  t.is((await m.page.goto(agentUrl))?.status(), 404);
  m.watch.clearExpected();

  // The owner approves with a spend cap (a bad cap first: the error is shown next to the field).
  await o.page.goto(`${gw.url}/console/agents?enterprise=${ent.id}`);
  t.regex((await o.page.textContent('[data-testid=pending]')) ?? '', /my fox key/);
  o.watch.expect(400);
  await o.page.fill('[data-testid=pending] input[name=spend_cap_usd]', 'lots');
  await o.page.click('[data-testid=pending] button.primary');
  t.truthy(await o.page.textContent('[data-testid=pending] .field-error, [data-testid=pending] [id^=err-]'));
  t.is(await o.page.inputValue('[data-testid=pending] input[name=spend_cap_usd]'), 'lots', 'the refused cap is shown back to correct, not lost');
  // On a phone the request's card holds its cap field, Approve, the error and Reject: nothing past the screen's edge.
  await screenshots(o.page, 'agents-pending-error', t);
  o.watch.clearExpected();
  await o.page.fill('[data-testid=pending] input[name=spend_cap_usd]', '5');
  await Promise.all([o.page.waitForURL(/\/console\/agents\?enterprise=/), o.page.click('[data-testid=pending] button.primary')]);
  t.regex((await o.page.textContent('[data-testid=pending]')) ?? '', /None/);
  t.regex((await o.page.textContent('[data-testid=agent-audit]')) ?? '', /Approved/);
  await screenshots(o.page, 'agents-owner', t);

  // The member sees the issued key with its cap, and views its plaintext.
  await m.page.goto(`${gw.url}/console/agents`);
  const row = (await m.page.textContent('tr[data-key]')) ?? '';
  t.regex(row, /issued/);
  t.regex(row, /\b5(\.0+)?\b/);
  await m.page.click('tr[data-key] form button');
  await m.page.waitForSelector('[data-testid=agent-plaintext]');
  const plaintext = ((await m.page.textContent('[data-testid=agent-plaintext]')) ?? '').trim();
  t.regex(plaintext, /^\S{20,}$/);
  await screenshots(m.page, 'agents-member', t);
  // The owner's audit record shows the view and where it came from.
  await o.page.goto(`${gw.url}/console/agents?enterprise=${ent.id}`);
  const audit = (await o.page.textContent('[data-testid=agent-audit]')) ?? '';
  t.regex(audit, /Viewed the key/);
  t.regex(audit, /from (::ffff:)?127\.0\.0\.1/);
  // A call with the key shows in the agent's usage, by day.
  const call = await post(gw, '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'foxes?' }], max_tokens: 5 }, { key: plaintext });
  t.is(call.status, 200);
  await usageRow(gw, call.trace);
  await o.page.goto(agentUrl);
  t.regex((await o.page.textContent('[data-testid=agent-usage]')) ?? '', /1 requests/);
  t.regex((await o.page.textContent('[data-testid=agent-usage-days]')) ?? '', new RegExp(new Date().toISOString().slice(0, 10)));

  // The owner issues a key directly to the member, then revokes it; the member's list follows.
  await o.page.goto(agentUrl);
  await o.page.fill('form[action$="/keys"] #f-name', 'issued directly');
  await o.page.selectOption('#f-holder', member.id);
  await o.page.fill('form[action$="/keys"] #f-spend_cap_usd', '2');
  await o.page.click('form[action$="/keys"] button.primary');
  await o.page.waitForSelector('[data-testid=agent-plaintext]');
  const direct = o.page.locator('tr[data-key]', { hasText: 'issued directly' });
  t.regex((await direct.textContent()) ?? '', /issued/);
  t.true(((await direct.textContent()) ?? '').includes(member.email), 'the holder is shown by email, not by user id');
  await Promise.all([o.page.waitForURL(/\/console\/agents\/[^/?]+$/), direct.locator('button.danger').click()]);
  t.regex((await o.page.locator('tr[data-key]', { hasText: 'issued directly' }).textContent()) ?? '', /revoked/);
  await m.page.goto(`${gw.url}/console/agents`);
  t.regex((await m.page.locator('tr[data-key]', { hasText: 'issued directly' }).textContent()) ?? '', /revoked/);

  // Deleting the agent revokes its issued keys (each audited); the audit record stays.
  await o.page.goto(agentUrl);
  await Promise.all([o.page.waitForURL(/\/console\/agents\?/), o.page.click('form[action$="/delete"] button')]);
  t.regex((await o.page.textContent('[data-testid=notice]')) ?? '', /1 issued key\(s\) revoked/);
  t.regex((await o.page.textContent('[data-testid=agent-audit]')) ?? '', /Revoked · key my fox key/);
  await m.page.goto(`${gw.url}/console/agents`);
  t.regex((await m.page.locator('tr[data-key]', { hasText: 'my fox key' }).textContent()) ?? '', /revoked/);

  // Another user sees no enterprise and gets 404 for the agent.
  const x = await newPage(browser);
  await signIn(x.page, gw.url, outsider.email, outsider.password);
  x.watch.expect(404);
  t.is((await x.page.goto(agentUrl))?.status(), 404);
  // Nor can they browse or search the enterprise's team base.
  t.is((await x.page.goto(`${gw.url}/console/kb/${base.kb_id}?q=fox`))?.status(), 404);
  t.is((await x.page.goto(`${gw.url}/console/kb/${base.kb_id}/pages/pg_x`))?.status(), 404);
  x.watch.clearExpected();

  for (const w of [o, m, x]) {
    w.watch.assertClean(t);
    await w.context.close();
  }
});

test('with an enterprise shown, its own base is labelled as the enterprise\'s (list, base page, the agent\'s Attach picker); base-id errors read as words', async (t) => {
  const ent = await gw.newAccount({ name: 'Labels Inc', enterprise: true });
  const owner = await newUser(gw, 'kb-labels');
  await gw.deps.people.setMember(ent.id, owner.id, 'owner');
  const s = await httpSession(gw.url, owner.email, owner.password);
  t.is((await s.post('/console/account', { account_id: ent.id })).status, 302);

  const list = await (await s.get('/console/kb')).text();
  const row = /<tr data-kb="default">([\s\S]*?)<\/tr>/.exec(list)?.[1] ?? '';
  t.regex(row, />Enterprise base</);
  t.notRegex(row, /Personal|>you</);
  t.notRegex(await (await s.get('/console/kb/default')).text(), /Knowledge base Personal/);
  // The personal account still has its personal base.
  t.is((await s.post('/console/account', { account_id: owner.accountId })).status, 302);
  t.regex(/<tr data-kb="default">([\s\S]*?)<\/tr>/.exec(await (await s.get('/console/kb')).text())?.[1] ?? '', />Personal</);
  t.is((await s.post('/console/account', { account_id: ent.id })).status, 302);

  const agent = await s.post('/console/agents', { enterprise_id: ent.id, name: 'Label agent', system_prompt: 'You label things.' });
  t.is(agent.status, 302);
  const picker = await (await s.get(agent.headers.get('location')!)).text();
  t.regex(picker, /<option value="default">Enterprise base \(default\)<\/option>/);
  t.notRegex(picker, /Personal \(default\)/);

  // A base id the rules refuse: the form's sentence, no backticks or field names.
  const bad = await s.post('/console/kb', { name: 'Team docs', kb_id: 'Bad Id!' });
  t.is(bad.status, 400);
  const message = /id="err-kb_id" role="alert">([^<]*)</.exec(await bad.text())?.[1] ?? '';
  t.regex(message, /lowercase letters, digits, underscores and hyphens/);
  t.notRegex(message, /`|kb_id/);
});

test('issuing an agent key and viewing one redirect (303) to a page that shows the plaintext once; a reload issues nothing and records no view', async (t) => {
  const ent = await gw.newAccount({ name: 'Acme once', enterprise: true });
  const owner = await newUser(gw, 'agent-once');
  await gw.deps.people.setMember(ent.id, owner.id, 'owner');
  const actor = { kind: 'user' as const, userId: owner.id };
  const agent = await gw.deps.agents.service.create(actor, ent.id, { name: 'Once helper', system_prompt: 'Answer briefly.' } as never);
  await gw.deps.agents.service.setPublished(actor, agent.id, true);
  const s = await httpSession(gw.url, owner.email, owner.password);
  const keysOf = async () => gw.deps.agents.keys.listForEnterprise(actor, ent.id, { agentId: agent.id });
  const shown = (page: string) => /data-testid="agent-plaintext">([^<]+)</.exec(page)?.[1];

  const issued = await s.post(`/console/agents/${agent.id}/keys`, { name: 'direct' });
  t.is(issued.status, 303);
  const location = issued.headers.get('location') ?? '';
  t.regex(location, /^\/console\/agents\/[^/?]+\?issued=/);
  const plaintext = shown(await (await s.get(location)).text());
  t.regex(plaintext ?? '', /^\S{20,}$/);
  t.is(shown(await (await s.get(location)).text()), undefined, 'a reload shows it no more');
  t.is((await keysOf()).length, 1, 'a reload issues nothing');

  const views = async () => (await gw.deps.agents.audit.list(ent.id, { limit: 100 })).rows.filter((r) => r.action === 'view_plaintext').length;
  const keyId = (await keysOf())[0]._id;
  const viewed = await s.post(`/console/agent-keys/${keyId}/view`);
  t.is(viewed.status, 303);
  const at = viewed.headers.get('location') ?? '';
  t.is(shown(await (await s.get(at)).text()), plaintext);
  t.is(shown(await (await s.get(at)).text()), undefined);
  t.is(await views(), 1);
});
