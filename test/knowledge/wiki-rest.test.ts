import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { seedDocument, seedTeamBase } from './seed';

/** Spec 3 section 4.1: the 8 read-only endpoints, their limits, scope and errors. */

let gw: TestGateway;
let acct: { id: string };
let key: string;
let other: { id: string };
let otherKey: string;
const W = '/api/v1/ext/wiki';

async function get(path: string, k: string | null = key, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}${W}${path}`, { headers: { ...(k ? { authorization: `Bearer ${k}` } : {}), ...headers } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

const LONG = `${'Long body paragraph about glaciers and ice. '.repeat(200)}\n\nThe end.`;

test.before(async () => {
  gw = await startGateway();
  acct = await gw.newAccount({ name: 'reader' });
  key = (await gw.newKey(acct.id)).key;
  other = await gw.newAccount({ name: 'other' });
  otherKey = (await gw.newKey(other.id)).key;

  // 60 pages that all mention "orchard", for paging and limits.
  await seedDocument(gw.deps, acct.id, 'default', Array.from({ length: 60 }, (_, i) => ({
    id: `pg_orchard_${String(i).padStart(2, '0')}`,
    title: `Orchard note ${i}`,
    body: `Apples grow in the orchard. Note number ${i}.${i === 7 ? ' Pears and plums grow in the orchard too; pears ripen late.' : ''}`,
    tags: i % 2 === 0 ? ['fruit', 'even'] : ['fruit'],
  })));
  await seedDocument(gw.deps, acct.id, 'default', [
    { id: 'pg_hub', title: 'Glacier hub', body: LONG, summary: 'All about glaciers.', tags: ['ice'], aliases: ['ice sheets'] },
    { id: 'pg_spoke1', title: 'Moraines', body: 'Moraines are left by a [[Glacier hub]].', tags: ['ice'], links: ['pg_hub'] },
    { id: 'pg_spoke2', title: 'Crevasses', body: 'Crevasses open in glaciers.', tags: ['ice'], links: ['pg_hub', 'pg_spoke1'] },
    { id: 'pg_zh', title: '知识库检索', body: '知识库把上传的文档编译成互相链接的页面。用户可以用中文关键词检索页面。', tags: ['中文'] },
    { id: 'pg_ja', title: '検索の仕組み', body: 'ナレッジベースはアップロードされた文書をページに変換します。日本語で検索できます。', tags: ['日本語'] },
  ], { filename: 'glaciers.md' });
  // The other account's personal base holds a page about orchards too.
  await seedDocument(gw.deps, other.id, 'default', [{ id: 'pg_secret', title: 'Secret orchard', body: 'A hidden orchard of apples.', tags: ['fruit'] }]);
});
test.after.always(async () => {
  await gw?.close();
});

test('search: q is required; hits have the spec fields; default limit 20; total_hits, has_more, offset, returned', async (t) => {
  const missing = await get('/search');
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'invalid_request');
  t.is(missing.body.error.type, 'invalid_request_error');
  t.is((await get('/search?q=%20%20')).status, 400);

  const r = await get('/search?q=orchard');
  t.is(r.status, 200);
  t.is(r.body.query, 'orchard');
  t.is(r.body.total_hits, 60);
  t.is(r.body.returned, 20);
  t.is(r.body.results.length, 20);
  t.is(r.body.offset, 0);
  t.true(r.body.has_more);
  const hit = r.body.results[0];
  for (const f of ['id', 'title', 'summary', 'snippet', 'tags', 'confidence', 'needs_review', 'score']) t.true(f in hit, f);
  t.is(typeof hit.score, 'number');
  t.regex(hit.snippet, /orchard/i);
  t.false(r.body.results.some((h: any) => h.id === 'pg_secret'), 'another account\'s page never appears');

  const last = await get('/search?q=orchard&limit=25&offset=50');
  t.is(last.body.total_hits, 60);
  t.is(last.body.returned, 10);
  t.is(last.body.offset, 50);
  t.false(last.body.has_more);

  // Pages do not overlap and cover every hit.
  const ids = new Set<string>();
  for (let off = 0; off < 60; off += 20) for (const h of (await get(`/search?q=orchard&offset=${off}`)).body.results) ids.add(h.id);
  t.is(ids.size, 60);
});

test('search: limit is capped at 50; a bad limit or offset is a 400', async (t) => {
  const r = await get('/search?q=orchard&limit=100');
  t.is(r.status, 200);
  t.is(r.body.returned, 50);
  t.is((await get('/search?q=orchard&limit=0')).status, 400);
  t.is((await get('/search?q=orchard&limit=abc')).status, 400);
  t.is((await get('/search?q=orchard&offset=-1')).status, 400);
});

test('search ranks the better match first and the snippet is the passage with the terms', async (t) => {
  const r = await get('/search?q=pears%20plums');
  t.is(r.body.total_hits, 1);
  t.is(r.body.results[0].id, 'pg_orchard_07');
  t.regex(r.body.results[0].snippet, /Pears and plums/);
  const alias = await get('/search?q=ice%20sheets');
  t.is(alias.body.results[0].id, 'pg_hub', 'an alias match ranks the page first');
  const stem = await get('/search?q=glacier');
  t.true(stem.body.results.some((h: any) => h.id === 'pg_spoke2'), '"glacier" finds "glaciers"');
});

test('search in Chinese and Japanese finds the Chinese and Japanese pages', async (t) => {
  const zh = await get(`/search?q=${encodeURIComponent('检索页面')}`);
  t.is(zh.status, 200);
  t.is(zh.body.results[0].id, 'pg_zh');
  t.regex(zh.body.results[0].snippet, /检索/);
  const zh2 = await get(`/search?q=${encodeURIComponent('知识库')}`);
  t.is(zh2.body.results[0].id, 'pg_zh');
  const ja = await get(`/search?q=${encodeURIComponent('日本語で検索')}`);
  t.is(ja.body.results[0].id, 'pg_ja');
  t.regex(ja.body.results[0].snippet, /検索/);
});

test('kbs lists the readable bases with page counts; team bases follow membership', async (t) => {
  const r = await get('/kbs');
  t.is(r.status, 200);
  t.deepEqual(r.body.data, [{ kb_id: 'default', name: 'Personal', kind: 'personal', page_count: 65 }]);

  const ent = await gw.newAccount({ name: 'Acme', enterprise: true });
  const user = (await gw.admin('POST', '/users', { email: 'kbs@example.com', name: 'K' })).body;
  await gw.admin('PUT', `/accounts/${ent.id}/members`, { user_id: user.id, role: 'member' });
  await seedTeamBase(gw.deps, ent.id, 'kb_team_open');
  await seedTeamBase(gw.deps, ent.id, 'kb_team_closed', ['usr_nobody']);
  await seedDocument(gw.deps, ent.id, 'kb_team_open', [{ id: 'pg_team', title: 'Team handbook', body: 'How the team works.' }]);
  const userKey = (await gw.newKey(user.personal_account_id)).key;
  const mine = await get('/kbs', userKey);
  t.deepEqual(mine.body.data.map((b: any) => [b.kb_id, b.kind, b.page_count]), [['default', 'personal', 0], ['kb_team_open', 'team', 1]]);
  t.is((await get('/search?q=handbook&kb_id=kb_team_open', userKey)).body.results[0].id, 'pg_team');
  t.is((await get('/search?q=handbook&kb_id=kb_team_closed', userKey)).status, 404);
  t.is((await get('/pages/pg_team?kb_id=kb_team_open', userKey)).status, 200);
  // The reader's own key cannot see the enterprise's base at all.
  const notMine = await get('/search?q=handbook&kb_id=kb_team_open');
  t.is(notMine.status, 404);
});

test('tags with counts, and the pages of a tag', async (t) => {
  const r = await get('/tags');
  t.is(r.status, 200);
  t.is(r.body.kb_id, 'default');
  t.deepEqual(r.body.data.slice(0, 3), [{ tag: 'fruit', count: 60 }, { tag: 'even', count: 30 }, { tag: 'ice', count: 3 }]);
  t.true(r.body.data.some((x: any) => x.tag === '中文' && x.count === 1));

  const ice = await get('/tags/ice');
  t.is(ice.status, 200);
  t.is(ice.body.tag, 'ice');
  t.is(ice.body.total, 3);
  t.deepEqual(ice.body.data.map((p: any) => p.id), ['pg_spoke2', 'pg_hub', 'pg_spoke1']);
  t.false('body' in ice.body.data[0]);
  const zh = await get(`/tags/${encodeURIComponent('中文')}`);
  t.deepEqual(zh.body.data.map((p: any) => p.id), ['pg_zh']);
  const paged = await get('/tags/fruit?limit=10&offset=55');
  t.is(paged.body.total, 60);
  t.is(paged.body.returned, 5);
  t.false(paged.body.has_more);
  t.is((await get('/tags/none-such')).body.total, 0);
});

test('batch read: at most 25 ids, extras dropped, empty is 400, bodies cut to 4000 with body_truncated', async (t) => {
  const ids = Array.from({ length: 30 }, (_, i) => `pg_orchard_${String(i).padStart(2, '0')}`);
  const r = await get(`/pages?ids=${ids.join(',')}`);
  t.is(r.status, 200);
  t.is(r.body.data.length, 25);
  t.deepEqual(r.body.data.map((p: any) => p.id), ids.slice(0, 25));

  const cut = await get('/pages?ids=pg_hub,pg_spoke1,pg_nothing,pg_secret');
  t.deepEqual(cut.body.data.map((p: any) => p.id), ['pg_hub', 'pg_spoke1']);
  t.deepEqual(cut.body.missing, ['pg_nothing', 'pg_secret']);
  const hub = cut.body.data[0];
  t.is(hub.body.length, 4000);
  t.true(hub.body_truncated);
  t.false(cut.body.data[1].body_truncated);
  for (const f of ['id', 'kb_id', 'title', 'summary', 'tags', 'aliases', 'links', 'body', 'confidence', 'needs_review', 'source', 'outgoing_links']) t.true(f in hub, f);

  for (const q of ['', '?ids=', '?ids=,,', '?ids=%20']) {
    const empty = await get(`/pages${q}`);
    t.is(empty.status, 400, q);
    t.is(empty.body.error.code, 'invalid_request');
  }
});

test('one page in full; backlinks; source with a 1-hour link', async (t) => {
  const p = await get('/pages/pg_hub');
  t.is(p.status, 200);
  t.is(p.body.body, LONG);
  t.is(p.body.kb_id, 'default');
  t.deepEqual(p.body.aliases, ['ice sheets']);
  t.is(p.body.source.filename, 'glaciers.md');
  t.false('body_truncated' in p.body);
  t.regex(p.body.source.compiled_at, /^\d{4}-\d{2}-\d{2}T/);

  const spoke = await get('/pages/pg_spoke2');
  t.deepEqual(spoke.body.outgoing_links, [{ id: 'pg_hub', resolved: true, title: 'Glacier hub' }, { id: 'pg_spoke1', resolved: true, title: 'Moraines' }]);

  const back = await get('/pages/pg_hub/backlinks');
  t.is(back.status, 200);
  t.is(back.body.id, 'pg_hub');
  t.deepEqual(back.body.data.map((x: any) => x.id), ['pg_spoke2', 'pg_spoke1']);
  t.deepEqual((await get('/pages/pg_spoke2/backlinks')).body.data, []);

  const src = await get('/pages/pg_hub/source');
  t.is(src.status, 200);
  t.is(src.body.url_ttl_secs, 3600);
  t.is(src.body.filename, 'glaciers.md');
  t.is(src.body.locator, '# Glacier hub');
  t.truthy(src.body.r2_key);
  const url = new URL(src.body.url);
  t.true(Number(url.searchParams.get('expires')) - Date.now() / 1000 > 3590);
  // The link downloads the file with no key; an altered link gets no data.
  const file = await fetch(src.body.url);
  t.is(file.status, 200);
  t.regex(await file.text(), /# Glacier hub/);
  url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 10));
  const forged = await fetch(url);
  t.is(forged.status, 403);
  t.notRegex(await forged.text(), /Glacier/);
});

test('missing and unreadable bases and pages give the same 404', async (t) => {
  const shapes = new Set<string>();
  for (const path of [
    '/pages/pg_nothing', '/pages/pg_secret', '/pages/pg_nothing/backlinks', '/pages/pg_secret/backlinks',
    '/pages/pg_nothing/source', '/pages/pg_secret/source',
    '/search?q=orchard&kb_id=kb_none', `/tags?kb_id=kb_none`, '/tags/fruit?kb_id=kb_none', '/pages?ids=pg_hub&kb_id=kb_none',
    '/pages/pg_hub?kb_id=kb_none',
  ]) {
    const r = await get(path);
    t.is(r.status, 404, path);
    t.is(r.body.error.code, 'not_found', path);
    t.is(r.body.error.type, 'invalid_request_error', path);
    shapes.add(JSON.stringify(Object.keys(r.body.error).sort()));
  }
  t.is(shapes.size, 1);
  const a = await get('/pages/pg_nothing');
  const b = await get('/pages/pg_secret');
  t.is(a.body.error.message.replace('pg_nothing', 'X'), b.body.error.message.replace('pg_secret', 'X'));
  // The owner reads it.
  t.is((await get('/pages/pg_secret', otherKey)).status, 200);
  t.is((await get('/search?q=orchard', otherKey)).body.total_hits, 1);
});

test('an invalid or missing key is 401 invalid_api_key on every endpoint, in the chat-completions shape', async (t) => {
  const paths = ['/search?q=x', '/kbs', '/tags', '/tags/x', '/pages?ids=a', '/pages/a', '/pages/a/backlinks', '/pages/a/source'];
  for (const path of paths) {
    for (const k of [null, `sk-test-${'0'.repeat(64)}`, 'nonsense']) {
      const r = await get(path, k);
      t.is(r.status, 401, `${path} ${k}`);
      t.is(r.body.error.code, 'invalid_api_key');
      t.is(r.body.error.type, 'authentication_error');
    }
  }
  // The other key sources of spec 1 section 5 work too.
  t.is((await get('/kbs', null, { 'x-api-key': key })).status, 200);
  t.is((await fetch(`${gw.url}${W}/kbs?key=${key}`)).status, 200);
  // Revoked keys are refused.
  const revoked = await gw.newKey(acct.id);
  await gw.admin('PATCH', `/keys/${revoked.id}`, { enabled: false });
  t.is((await get('/kbs', revoked.key)).body.error.code, 'invalid_api_key');
});

test('reads are free: they work at balance 0 and never move the balance', async (t) => {
  const poor = await gw.newAccount({ name: 'poor' });
  const poorKey = (await gw.newKey(poor.id)).key;
  await seedDocument(gw.deps, poor.id, 'default', [
    { id: 'pg_poor1', title: 'Budget', body: 'Spending nothing on reading.', tags: ['money'], links: ['pg_poor2'] },
    { id: 'pg_poor2', title: 'Savings', body: 'Reading is free.', tags: ['money'] },
  ]);
  const before = await gw.deps.wallet.balance(poor.id);
  await gw.deps.wallet.apply({ opId: `${poor.id}:drain`, accountId: poor.id, kind: 'adjust', amountNano: -before });
  t.is(await gw.deps.wallet.balance(poor.id), 0);
  const ledgerBefore = await gw.deps.db.Ledger.countDocuments({ account_id: poor.id });
  for (const path of ['/search?q=reading', '/kbs', '/tags', '/tags/money', '/pages?ids=pg_poor1,pg_poor2', '/pages/pg_poor1', '/pages/pg_poor2/backlinks', '/pages/pg_poor1/source']) {
    const r = await get(path, poorKey);
    t.is(r.status, 200, path);
  }
  t.is(await gw.deps.wallet.balance(poor.id), 0);
  t.is(await gw.deps.db.Ledger.countDocuments({ account_id: poor.id }), ledgerBefore);
  // A chat call at balance 0 is refused, as a contrast.
  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${poorKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.is(chat.status, 402);
});

test('only GET: other methods are refused', async (t) => {
  const r = await fetch(`${gw.url}${W}/search?q=x`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  t.is(r.status, 405);
});
