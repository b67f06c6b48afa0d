import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { ACCOUNT_ID, MODEL, TASK_ID } from '../../domain/media/search-attributes';
import { livePages, load, makeDocx, makePdf, uploadJson, uploadMultipart, waitBuild } from './kit';

/** Loading a base through the operator API, on the real stack (Temporal worker, FerretDB, Redis). */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { worker: true, simulator: true });
});
test.after.always(async () => {
  await gw?.close();
});

const GUIDE = `# Gateway Guide

The gateway routes chat requests to upstream vendors and keeps one wallet per account.
Every request is billed once.

## Channels

Each model has up to three channels. A failing channel hands the request to the next one.

## Wallet

The wallet holds prepaid credit. Charges are integers of nano-credits.
`;

test('Markdown by JSON: 202 with a build id, the build succeeds and its pages are visible with their source', async (t) => {
  const a = await gw.newAccount();
  const up = await uploadJson(gw, a.id, 'default', { filename: 'guide.md', content: GUIDE });
  t.is(up.status, 202);
  t.regex(up.body.id, /^build_/);
  t.is(up.body.state, 'queued');
  t.false(up.body.duplicate);
  const done = await waitBuild(gw, a.id, 'default', up.body.id);
  t.is(done.state, 'succeeded', JSON.stringify(done));
  t.true(done.live);
  t.is(done.pages_made, 3);
  // One workflow per build, found in the Temporal UI by build id and account.
  const wf = await gw.deps.temporal.workflow.getHandle(up.body.id).describe();
  t.is(wf.type, 'kbBuildWorkflow');
  t.is(wf.typedSearchAttributes.get(TASK_ID), up.body.id);
  t.is(wf.typedSearchAttributes.get(ACCOUNT_ID), a.id);
  t.is(wf.typedSearchAttributes.get(MODEL), 'rules');
  const pages = await livePages(gw, a.id);
  t.deepEqual(pages.map((p) => p.title), ['Gateway Guide', 'Channels', 'Wallet']);
  const channels = pages[1];
  t.is(channels.source.filename, 'guide.md');
  t.is(channels.source.locator, 'Gateway Guide > Channels');
  t.is(channels.source.model, 'rules');
  t.truthy(Date.parse(channels.source.compiled_at));
  t.regex(channels.source.r2_key, new RegExp(`^kb/${a.id}/default/doc_`));
  t.true(channels.summary.startsWith('Each model has up to three channels.'));
  t.true(channels.tags.includes('channel') || channels.tags.includes('channels'), channels.tags.join(','));
  t.true(channels.confidence > 0.6);
  t.false(channels.needs_review);
  // The document list.
  const docs = await gw.admin('GET', `/accounts/${a.id}/kbs/default/documents`);
  t.is(docs.body.data.length, 1);
  t.is(docs.body.data[0].filename, 'guide.md');
  t.is(docs.body.data[0].page_count, 3);
  t.is(docs.body.data[0].live_build_id, up.body.id);
  t.deepEqual(done.progress, { pages_done: 3, pages_total: 3 });
  t.deepEqual(docs.body.progress, { documents_total: 1, documents_done: 1, documents_failed: 0, pages_done: 3, pages_total: 3 });
});

test('a real-sized document (840 KB, 519 pages, compiled in the worker threads): its build reports pages done out of total while it runs, links resolve across documents', async (t) => {
  const { generateCorpus } = await import('../../dev/bench/lib/abstracts');
  const [one, two] = generateCorpus().slice(0, 2);
  const a = await gw.newAccount();
  const up = await uploadJson(gw, a.id, 'default', { filename: one.filename, content: one.markdown });
  t.is(up.status, 202);
  t.deepEqual(up.body.progress, { pages_done: 0, pages_total: null });
  const seen: Array<{ state: string; done: number; total: number | null }> = [];
  let build;
  for (;;) {
    build = (await gw.admin('GET', `/accounts/${a.id}/kbs/default/builds/${up.body.id}`)).body;
    seen.push({ state: build.state, done: build.progress.pages_done, total: build.progress.pages_total });
    if (build.state === 'succeeded' || build.state === 'failed') break;
    await new Promise((res) => setTimeout(res, 50));
  }
  t.is(build.state, 'succeeded', JSON.stringify(build));
  t.is(build.pages_made, one.abstracts + 1);
  t.deepEqual(build.progress, { pages_done: one.abstracts + 1, pages_total: one.abstracts + 1 });
  // Progress only moves forward, and the total is the pages the build made once the compile is done.
  for (let i = 1; i < seen.length; i++) t.true(seen[i].done >= seen[i - 1].done, JSON.stringify(seen));
  t.true(seen.every((s) => s.total === null || s.total === one.abstracts + 1));
  // A second document linking to the first by title: resolved against the 519 pages already there.
  const title = (await livePages(gw, a.id))[5].title;
  const second = await load(gw, a.id, 'default', two.filename, `${two.markdown}\n\n## See also\n\nSee [[${title}]].\n`);
  t.is(second.state, 'succeeded', JSON.stringify(second));
  const pages = await livePages(gw, a.id);
  const seeAlso = pages.find((p) => p.title === 'See also')!;
  t.true(seeAlso.outgoing_links.some((l) => l.resolved && l.title === title), JSON.stringify(seeAlso.outgoing_links));
  const list = (await gw.admin('GET', `/accounts/${a.id}/kbs/default/documents`)).body;
  t.is(list.progress.documents_done, 2);
  t.is(list.progress.pages_done, pages.length);
});

test('plain text, HTML, PDF and DOCX each become pages (multipart and base64 JSON)', async (t) => {
  const a = await gw.newAccount();
  // Plain text: no headings, so one page titled from the file.
  const txt = await uploadMultipart(gw, a.id, 'default', 'release-notes.txt', 'Release notes for the spring version.\n\nThe console now shows usage per key. Search got faster.', 'text/plain');
  t.is(txt.status, 202, JSON.stringify(txt.body));
  // HTML: headings survive, scripts do not.
  const html = `<html><head><title>Ops Handbook</title><script>alert(1)</script></head><body><h1>Ops Handbook</h1><p>How we run the service day to day.</p>
    <h2>Deploys</h2><p>Deploys swap workers one at a time. A worker killed mid-task changes nothing.</p><script>var x = 1;</script></body></html>`;
  const h = await uploadMultipart(gw, a.id, 'default', 'ops.html', html, 'text/html');
  t.is(h.status, 202);
  const pdf = await makePdf([
    ['Quarterly Report', '', 'Revenue grew in every region this quarter.', 'Costs stayed flat.'],
    ['Outlook', '', 'Next quarter we expect steady growth in Asia.'],
  ]);
  const p = await uploadJson(gw, a.id, 'default', { filename: 'report.pdf', content: pdf.toString('base64'), base64: true });
  t.is(p.status, 202, JSON.stringify(p.body));
  const docx = await makeDocx([
    { heading: 'Onboarding', paragraphs: ['New staff get an account on day one.', 'They read the handbook first.'] },
    { heading: 'Security', paragraphs: ['Keys are stored encrypted. Rotate them every quarter.'] },
  ]);
  const d = await uploadMultipart(gw, a.id, 'default', 'people.docx', docx, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
  t.is(d.status, 202, JSON.stringify(d.body));
  for (const b of [txt, h, p, d]) t.is((await waitBuild(gw, a.id, 'default', b.body.id)).state, 'succeeded');

  const pages = await livePages(gw, a.id);
  const byFile = (f: string) => pages.filter((x) => x.source.filename === f);
  t.deepEqual(byFile('release-notes.txt').map((x) => x.title), ['release notes']);
  t.true(byFile('release-notes.txt')[0].body.includes('usage per key'));
  t.deepEqual(byFile('ops.html').map((x) => x.title), ['Ops Handbook', 'Deploys']);
  t.false(byFile('ops.html').some((x) => x.body.includes('alert') || x.body.includes('var x')));
  const rep = byFile('report.pdf');
  t.deepEqual(rep.map((x) => x.source.locator), ['p. 1', 'p. 2']);
  t.true(rep[0].body.includes('Revenue grew in every region'));
  t.true(rep[1].body.includes('steady growth in Asia'));
  t.deepEqual(byFile('people.docx').map((x) => x.title), ['Onboarding', 'Security']);
  t.true(byFile('people.docx')[1].body.includes('Keys are stored encrypted'));
});

test('refusals: unsupported type, empty file, wrong bytes, too large (413), unknown base (404)', async (t) => {
  const a = await gw.newAccount();
  const odd = await uploadJson(gw, a.id, 'default', { filename: 'x.exe', content: 'MZ' });
  t.is(odd.status, 400);
  t.regex(odd.body.error.message, /unsupported type/);
  t.is((await uploadJson(gw, a.id, 'default', { filename: 'x.md', content: '' })).status, 400);
  const fake = await uploadJson(gw, a.id, 'default', { filename: 'x.pdf', content: 'not a pdf' });
  t.is(fake.status, 400);
  t.regex(fake.body.error.message, /not a readable PDF/);
  const big = await uploadMultipart(gw, a.id, 'default', 'big.txt', Buffer.alloc(20 * 1024 * 1024 + 10, 'a'), 'text/plain');
  t.is(big.status, 413);
  t.regex(big.body.error.message, /20 MB/);
  t.is((await uploadJson(gw, a.id, 'nope', { filename: 'x.md', content: '# x' })).status, 404);
  t.is((await uploadJson(gw, 'acct_missing', 'default', { filename: 'x.md', content: '# x' })).status, 404);
  t.is((await uploadJson(gw, a.id, 'default', { filename: 'x.md', content: 'x', base64: true, extra: 1 })).status, 400);
});

test('the same bytes again are a no-op; a changed file replaces its pages, keeping ids of unchanged sections; delete removes them', async (t) => {
  const a = await gw.newAccount();
  const first = await load(gw, a.id, 'default', 'guide.md', GUIDE);
  const again = await uploadJson(gw, a.id, 'default', { filename: 'guide.md', content: GUIDE });
  t.is(again.status, 200);
  t.true(again.body.duplicate);
  t.is(again.body.id, first.id);
  t.is(await gw.deps.db.KbBuild.countDocuments({ account_id: a.id }), 1);
  const before = await livePages(gw, a.id);

  const changed = GUIDE.replace('## Wallet\n\nThe wallet holds prepaid credit. Charges are integers of nano-credits.\n', '## Keys\n\nKeys belong to one account and may carry a spend cap.\n');
  const second = await load(gw, a.id, 'default', 'guide.md', changed);
  t.is(second.state, 'succeeded');
  t.not(second.id, first.id);
  t.is(second.document_id, first.document_id);
  const after = await livePages(gw, a.id);
  t.deepEqual(after.map((p) => p.title), ['Gateway Guide', 'Channels', 'Keys']);
  t.is(after[0].page_id, before[0].page_id);
  t.is(after[1].page_id, before[1].page_id);
  t.false(after.some((p) => p.title === 'Wallet'));
  // Nothing of the old build is left behind: pages or file.
  t.is(await gw.deps.db.Page.countDocuments({ build_id: first.id }), 0);
  t.is(await gw.deps.kbFiles.get(before[0].source.r2_key), null);
  t.is((await gw.admin('GET', `/accounts/${a.id}/kbs/default/builds/${first.id}`)).body.live, false);

  const v = await gw.deps.pages.version({ account_id: a.id, kb_id: 'default' });
  const del = await gw.admin('DELETE', `/accounts/${a.id}/kbs/default/documents/${first.document_id}`);
  t.is(del.status, 200);
  t.deepEqual(await livePages(gw, a.id), []);
  t.true((await gw.deps.pages.version({ account_id: a.id, kb_id: 'default' })) > v);
  t.deepEqual((await gw.admin('GET', `/accounts/${a.id}/kbs/default/documents`)).body.data, []);
  t.is(await gw.deps.db.Page.countDocuments({ document_id: first.document_id }), 0);
  t.is((await gw.admin('DELETE', `/accounts/${a.id}/kbs/default/documents/${first.document_id}`)).status, 404);
  // Uploading the same bytes after the delete builds again.
  const back = await uploadJson(gw, a.id, 'default', { filename: 'guide.md', content: changed });
  t.is(back.status, 202);
  t.is((await waitBuild(gw, a.id, 'default', back.body.id)).state, 'succeeded');
  t.is((await livePages(gw, a.id)).length, 3);
});

test('two builds of one document racing: the newer upload ends live, readers never see both', async (t) => {
  const a = await gw.newAccount();
  const v1 = await uploadJson(gw, a.id, 'default', { filename: 'race.md', content: '# Race\n\nVersion one of the text, long enough to be a page.' });
  const v2 = await uploadJson(gw, a.id, 'default', { filename: 'race.md', content: '# Race\n\nVersion two of the text, long enough to be a page.' });
  const v3 = await uploadJson(gw, a.id, 'default', { filename: 'race.md', content: '# Race\n\nVersion three of the text, long enough to be a page.' });
  const ends = await Promise.all([v1, v2, v3].map((u) => waitBuild(gw, a.id, 'default', u.body.id)));
  t.is(ends[2].state, 'succeeded');
  for (const e of ends.slice(0, 2)) t.true(e.state === 'succeeded' || e.error?.code === 'superseded', JSON.stringify(e));
  const pages = await livePages(gw, a.id);
  t.is(pages.length, 1);
  t.true(pages[0].body.includes('Version three'));
  const doc = await gw.deps.db.KbDocument.findById(ends[2].document_id).lean();
  t.is(doc!.live_build_id, v3.body.id);
  t.is(await gw.deps.db.Page.countDocuments({ document_id: ends[2].document_id }), 1);
});

test('links resolve against the base in both directions: a missing target resolves when it arrives, and goes unresolved when deleted', async (t) => {
  const a = await gw.newAccount();
  await load(gw, a.id, 'default', 'alpha.md', '# Alpha Notes\n\nAlpha depends on [[Beta Topic]] and on the [tier list](pricing.md#tiers). It is long enough to keep.');
  let alpha = (await livePages(gw, a.id))[0];
  t.deepEqual(alpha.outgoing_links.map((l) => [l.title, l.resolved]), [['Beta Topic', false], ['pricing.md#tiers', false]]);
  t.deepEqual(alpha.links, []);
  const missingId = alpha.outgoing_links[0].id;

  // The target arrives: Alpha's link resolves; Beta's mention of "Alpha Notes" resolves at once.
  await load(gw, a.id, 'default', 'beta.md', '# Beta Topic\n\nBeta builds on Alpha Notes. Nothing more to say here really.');
  await load(gw, a.id, 'default', 'pricing.md', '# Pricing\n\nIntro to pricing.\n\n## Tiers\n\nThree tiers: free, team and enterprise plans.');
  const pages = await livePages(gw, a.id);
  const byTitle = new Map(pages.map((p) => [p.title, p]));
  alpha = byTitle.get('Alpha Notes')!;
  const beta = byTitle.get('Beta Topic')!;
  const tiers = byTitle.get('Tiers')!;
  t.deepEqual(alpha.outgoing_links, [
    { id: beta.page_id, resolved: true, title: 'Beta Topic' },
    { id: tiers.page_id, resolved: true, title: 'Tiers' },
  ]);
  t.notDeepEqual(missingId, beta.page_id);
  t.deepEqual(alpha.links, [beta.page_id, tiers.page_id]);
  t.deepEqual(beta.outgoing_links, [{ id: alpha.page_id, resolved: true, title: 'Alpha Notes' }]);

  // The target goes away: the link stays, unresolved again.
  await gw.admin('DELETE', `/accounts/${a.id}/kbs/default/documents/${beta.document_id}`);
  alpha = (await livePages(gw, a.id)).find((p) => p.title === 'Alpha Notes')!;
  t.deepEqual(alpha.outgoing_links[0], { id: missingId, resolved: false, title: 'Beta Topic' });
  t.deepEqual(alpha.links, [tiers.page_id]);
});

test('relinking after a publish reaches exactly the pages the document affects: mentions written across markup, renamed and removed targets', async (t) => {
  const a = await gw.newAccount();
  await load(gw, a.id, 'default', 'ops.md', '# Ops Runbook\n\nBefore a launch, read the Zeppelin **Hangar** rules and check the weather twice.');
  await load(gw, a.id, 'default', 'misc.md', '# Misc Notes\n\nNothing here names any other page of this base at all.');
  const find = async (title: string) => (await livePages(gw, a.id)).find((p) => p.title === title)!;
  t.deepEqual((await find('Ops Runbook')).outgoing_links, []);

  // The mentioned page arrives: the mention (split by emphasis markup) resolves; the unrelated page is untouched.
  const misc = await find('Misc Notes');
  await load(gw, a.id, 'default', 'hangar.md', '# Zeppelin Hangar\n\nThe hangar holds two airships and their crews.');
  const hangar = await find('Zeppelin Hangar');
  t.deepEqual((await find('Ops Runbook')).outgoing_links, [{ id: hangar.page_id, resolved: true, title: 'Zeppelin Hangar' }]);
  t.deepEqual(await find('Misc Notes'), misc);

  // The target is renamed (a new section id): the stale link is dropped.
  await load(gw, a.id, 'default', 'hangar.md', '# Airship Dock\n\nThe dock holds two airships and their crews.');
  t.deepEqual((await find('Ops Runbook')).outgoing_links, []);
});

test('Chinese and Japanese: split on headings, sentence summaries, CJK tags, title mentions as links', async (t) => {
  const a = await gw.newAccount();
  const zh = `# 知识库\n\n知识库把上传的文档变成互相链接的页面。每个页面都有标题、摘要和标签。\n\n## 检索增强生成\n\n检索增强生成先检索相关页面，再交给模型生成回答。它依赖知识库里的页面。\n`;
  const ja = `# 検索の仕組み\n\n検索は日本語の文書でも動作します。検索増強生成と同じく、知识库の页面を使います。\n`;
  t.is((await load(gw, a.id, 'default', '知识库.md', zh)).state, 'succeeded');
  t.is((await load(gw, a.id, 'default', '検索.md', ja)).state, 'succeeded');
  const pages = await livePages(gw, a.id);
  const byTitle = new Map(pages.map((p) => [p.title, p]));
  t.deepEqual([...byTitle.keys()].sort(), ['知识库', '検索の仕組み', '检索增强生成'].sort());
  const rag = byTitle.get('检索增强生成')!;
  t.is(rag.summary, '检索增强生成先检索相关页面，再交给模型生成回答。它依赖知识库里的页面。');
  t.true(rag.tags.includes('检索'), rag.tags.join(','));
  t.is(rag.source.locator, '知识库 > 检索增强生成');
  // "知识库" is mentioned in the body: a link to that page.
  t.true(rag.outgoing_links.some((l) => l.title === '知识库' && l.resolved));
  const kb = byTitle.get('知识库')!;
  t.true(kb.summary.startsWith('知识库把上传的文档变成互相链接的页面。'));
  const jaPage = byTitle.get('検索の仕組み')!;
  t.true(jaPage.tags.includes('検索'), jaPage.tags.join(','));
  t.false(jaPage.tags.some((x) => /^[ぁ-ん]+$/.test(x)), 'no particles as tags');
});

test('signed source link: the file for a valid link, 403 and no data once expired or tampered with', async (t) => {
  const a = await gw.newAccount();
  await load(gw, a.id, 'default', 'guide.md', GUIDE);
  const page = (await livePages(gw, a.id))[0];
  const info = gw.deps.sourceLinks.sourceInfo(page.source, gw.url);
  t.is(info.url_ttl_secs, 3600);
  t.is(info.filename, 'guide.md');
  t.is(info.r2_key, page.source.r2_key);
  const ok = await fetch(info.url);
  t.is(ok.status, 200);
  t.is(await ok.text(), GUIDE);
  t.regex(ok.headers.get('content-type') ?? '', /text\/markdown/);
  t.regex(ok.headers.get('content-disposition') ?? '', /guide\.md/);
  const url = new URL(info.url);
  t.is(Number(url.searchParams.get('expires')) - Math.floor(Date.now() / 1000) <= 3600, true);

  const old = gw.deps.sourceLinks.sourceInfo(page.source, gw.url, Date.now() - 3601 * 1000);
  const expired = await fetch(old.url);
  t.is(expired.status, 403);
  const eb = (await expired.json()) as any;
  t.regex(eb.error.message, /expired/);
  t.false(JSON.stringify(eb).includes('wallet'));

  const later = new URL(info.url);
  later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 3600));
  const forged = await fetch(later);
  t.is(forged.status, 403);
  t.regex(((await forged.json()) as any).error.message, /not valid/);
  const otherKey = new URL(info.url.replace(page.source.r2_key, page.source.r2_key.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'))));
  t.is((await fetch(otherKey)).status, 403);
  const noSig = new URL(info.url);
  noSig.searchParams.delete('sig');
  t.is((await fetch(noSig)).status, 403);
});

test('a source link serves the file as a download that the browser may neither sniff nor run: nosniff and a sandboxing CSP (security audit)', async (t) => {
  const a = await gw.newAccount();
  const html = '<html><head><title>Notes</title></head><body><h1>Notes</h1><p>Deploys swap workers one at a time.</p><script>fetch("/v1/key/balance")</script></body></html>';
  const r = await uploadMultipart(gw, a.id, 'default', 'notes.html', html, 'text/html');
  t.is(r.status, 202, JSON.stringify(r.body));
  await waitBuild(gw, a.id, 'default', r.body.id);
  const page = (await livePages(gw, a.id))[0];
  const res = await fetch(gw.deps.sourceLinks.sourceInfo(page.source, gw.url).url);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /text\/html/);
  t.regex(res.headers.get('content-disposition') ?? '', /^attachment;/);
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.is(res.headers.get('content-security-policy'), "default-src 'none'; sandbox");
  t.is(await res.text(), html);
});

test('team bases: only on enterprises, ids unique across the platform, readers must be members, list/patch/delete', async (t) => {
  const personal = await gw.newAccount();
  const ent = await gw.newAccount({ enterprise: true });
  const other = await gw.newAccount({ enterprise: true });
  t.is((await gw.admin('POST', `/accounts/${personal.id}/kbs`, { name: 'x' })).status, 400);
  const kbId = `handbook-${Date.now().toString(36)}`;
  const made = await gw.admin('POST', `/accounts/${ent.id}/kbs`, { kb_id: kbId, name: 'Handbook', readers: 'all' });
  t.is(made.status, 201);
  t.like(made.body, { id: kbId, kind: 'team', readers: 'all', compiler: 'rules', compiler_model: null });
  const taken = await gw.admin('POST', `/accounts/${other.id}/kbs`, { kb_id: kbId, name: 'Mine' });
  t.is(taken.status, 409);
  t.is((await gw.admin('POST', `/accounts/${ent.id}/kbs`, { kb_id: 'default', name: 'x' })).status, 400);
  t.is((await gw.admin('POST', `/accounts/${ent.id}/kbs`, { name: 'x', readers: ['user_nobody'] })).status, 400);
  t.is((await gw.admin('POST', `/accounts/${ent.id}/kbs`, { name: 'x', compiler: 'llm' })).status, 400);
  t.is((await gw.admin('POST', `/accounts/${ent.id}/kbs`, { name: 'x', compiler: 'llm', compiler_model: 'no-such-model' })).status, 400);

  const user = await gw.admin('POST', '/users', { email: `u${Date.now()}@example.com`, name: 'U' });
  await gw.admin('PUT', `/accounts/${ent.id}/members`, { user_id: user.body.id, role: 'member' });
  const patched = await gw.admin('PATCH', `/accounts/${ent.id}/kbs/${kbId}`, { readers: [user.body.id], name: 'Staff handbook' });
  t.is(patched.status, 200);
  t.deepEqual(patched.body.readers, [user.body.id]);
  t.deepEqual((await gw.deps.kbScope.forUser(user.body.id)).map((b) => b.kb_id).sort(), ['default', kbId].sort());
  const list = await gw.admin('GET', `/accounts/${ent.id}/kbs`);
  t.deepEqual(list.body.data.map((b: any) => b.id), ['default', kbId]);
  // The personal base takes only a compiler.
  t.is((await gw.admin('PATCH', `/accounts/${ent.id}/kbs/default`, { name: 'x' })).status, 400);
  const llm = await gw.admin('PATCH', `/accounts/${ent.id}/kbs/default`, { compiler: 'llm', compiler_model: 'gpt-5-mini' });
  t.like(llm.body, { id: 'default', compiler: 'llm', compiler_model: 'gpt-5-mini' });
  t.is((await gw.admin('DELETE', `/accounts/${ent.id}/kbs/default`)).status, 400);

  await load(gw, ent.id, kbId, 'h.md', GUIDE);
  await load(gw, ent.id, kbId, 'notes.md', '# Notes\n\nSome notes that are long enough to make a page of their own.');
  t.is((await livePages(gw, ent.id, kbId)).length, 4);
  const stored = await gw.deps.db.KbDocument.find({ account_id: ent.id, kb_id: kbId }).lean();
  t.is(stored.length, 2);
  for (const d of stored) t.truthy(await gw.deps.kbFiles.get(d.r2_key));
  t.is((await gw.admin('DELETE', `/accounts/${ent.id}/kbs/${kbId}`)).status, 200);
  t.is((await gw.admin('GET', `/accounts/${ent.id}/kbs/${kbId}`)).status, 404);
  t.deepEqual(await gw.deps.pages.livePagesById([], [{ account_id: ent.id, kb_id: kbId }]), []);
  t.false((await gw.deps.kbScope.forUser(user.body.id)).some((b) => b.kb_id === kbId));
  // The sweep workflow removes every page and file of the base and marks its documents deleted.
  const sweep = await gw.deps.temporal.workflow.getHandle(`kb-sweep:${ent.id}/${kbId}`).result();
  t.deepEqual(sweep, { pages: 4, files: 2 });
  t.is(await gw.deps.db.Page.countDocuments({ account_id: ent.id, kb_id: kbId }), 0);
  for (const d of stored) t.is(await gw.deps.kbFiles.get(d.r2_key), null);
  t.true((await gw.deps.db.KbDocument.find({ account_id: ent.id, kb_id: kbId }).lean()).every((d) => d.deleted_at && d.live_build_id === null));
  // Deleting again: 404, and no second sweep work.
  t.is((await gw.admin('DELETE', `/accounts/${ent.id}/kbs/${kbId}`)).status, 404);
});

test("cross-account: another account's base, build and document are 404 to an operator call through the wrong account", async (t) => {
  const owner = await gw.newAccount({ enterprise: true });
  const stranger = await gw.newAccount({ enterprise: true });
  const kbId = `team-${Date.now().toString(36)}`;
  await gw.admin('POST', `/accounts/${owner.id}/kbs`, { kb_id: kbId, name: 'Team' });
  const b = await load(gw, owner.id, kbId, 'guide.md', GUIDE);
  const mine = await load(gw, stranger.id, 'default', 'mine.md', GUIDE);
  for (const [method, path] of [
    ['GET', `/accounts/${stranger.id}/kbs/${kbId}`],
    ['PATCH', `/accounts/${stranger.id}/kbs/${kbId}`],
    ['DELETE', `/accounts/${stranger.id}/kbs/${kbId}`],
    ['GET', `/accounts/${stranger.id}/kbs/${kbId}/documents`],
    ['POST', `/accounts/${stranger.id}/kbs/${kbId}/documents`],
    ['GET', `/accounts/${stranger.id}/kbs/${kbId}/builds/${b.id}`],
    ['GET', `/accounts/${stranger.id}/kbs/default/builds/${b.id}`],
    ['DELETE', `/accounts/${stranger.id}/kbs/default/documents/${b.document_id}`],
    ['DELETE', `/accounts/${owner.id}/kbs/default/documents/${mine.document_id}`],
  ] as const) {
    const r = await gw.admin(method, path, method === 'POST' || method === 'PATCH' ? { filename: 'x.md', content: '# x' } : undefined);
    t.is(r.status, method === 'PATCH' ? 404 : 404, `${method} ${path}: ${JSON.stringify(r.body)}`);
  }
  t.is((await livePages(gw, owner.id, kbId)).length, 3);
  t.is((await livePages(gw, stranger.id)).length, 3);
});

test('LLM compiler: a chat model of the catalogue writes title, summary and tags (source.model names it), each call charged to the account with its usage row; a failing model falls back with a warning', async (t) => {
  const ent = await gw.newAccount({ enterprise: true });
  const kbId = `llm-${Date.now().toString(36)}`;
  t.is((await gw.admin('POST', `/accounts/${ent.id}/kbs`, { kb_id: kbId, name: 'LLM', compiler: 'llm', compiler_model: 'gpt-5-mini' })).status, 201);

  // No balance (the signup grant taken away): the pre-charge gate refuses every call, nothing is charged, the pages keep the rules' fields.
  const grant = await gw.deps.wallet.balance(ent.id);
  await gw.deps.wallet.apply({ opId: `${ent.id}:test-drain`, accountId: ent.id, kind: 'adjust', amountNano: -grant });
  const broke = await load(gw, ent.id, kbId, 'broke.md', '# Broke Doc\n\nA document compiled while the account has no credit at all.');
  t.is(broke.state, 'succeeded');
  t.is(broke.warnings.length, 1);
  t.regex(broke.warnings[0], /balance is too low/);
  t.is((await livePages(gw, ent.id, kbId))[0].source.model, 'rules');

  await gw.deps.wallet.apply({ opId: `${ent.id}:test-refill`, accountId: ent.id, kind: 'adjust', amountNano: grant });
  const before = await gw.deps.wallet.balance(ent.id);
  const ok = await load(gw, ent.id, kbId, 'guide.md', GUIDE);
  t.is(ok.state, 'succeeded');
  t.is(ok.model, 'gpt-5-mini');
  t.deepEqual(ok.warnings, []);
  const pages = (await livePages(gw, ent.id, kbId)).filter((p) => p.source.filename === 'guide.md');
  t.is(pages.length, 3);
  for (const p of pages) {
    t.is(p.source.model, 'gpt-5-mini');
    t.true(p.title.length > 0 && p.summary.length > 0 && p.tags.length > 0);
  }
  // One usage row per page call, on the account, priced like a chat call; the balance went down by their sum.
  await gw.deps.wallet.journal.flush();
  const rows = await gw.deps.db.Usage.find({ account_id: ent.id, endpoint: 'kb.compile' }).lean();
  t.is(rows.length, 3);
  for (const r of rows) {
    t.is(r.model, 'gpt-5-mini');
    t.is(r.task_id, ok.id);
    t.is(r.key_id, null);
    t.true(r.input_tokens > 0 && r.output_tokens > 0 && r.cost_nano > 0, JSON.stringify(r));
  }
  const spent = rows.reduce((s, r) => s + r.cost_nano, 0);
  t.is(before - (await gw.deps.wallet.balance(ent.id)), spent);
  const ledger = await gw.deps.db.Ledger.find({ account_id: ent.id, kind: 'charge' }).lean();
  t.deepEqual(ledger.map((l) => l._id).sort(), rows.map((r) => r._id).sort());
  // The simulator answered the forced record_page call: the heading stays an alias.
  t.true(pages.some((p) => p.aliases.includes('Channels')));
  const calls = await gw.control('GET', '/requests?channel=openai-a');
  t.true(JSON.stringify(calls).includes('record_page'));

  // Every channel fails: the rules' fields stay, marked for review, and the build says why.
  for (const ch of ['openai-a', 'openai-b', 'openai-c']) await gw.control('POST', '/faults', { channel: ch, fault: { type: 'status', status: 500 } });
  try {
    const fallback = await load(gw, ent.id, kbId, 'other.md', '# Other Doc\n\nA second document whose model calls all fail. It still gets pages.');
    t.is(fallback.state, 'succeeded');
    t.is(fallback.warnings.length, 1);
    t.regex(fallback.warnings[0], /gpt-5-mini gave no usable answer/);
    const p = (await livePages(gw, ent.id, kbId)).find((x) => x.source.filename === 'other.md')!;
    t.is(p.title, 'Other Doc');
    t.is(p.source.model, 'rules');
    t.true(p.needs_review);
  } finally {
    for (const ch of ['openai-a', 'openai-b', 'openai-c']) await gw.control('DELETE', `/faults?channel=${ch}`);
  }
});

test('a document that cannot be read ends its build failed with the reason, and nothing goes live', async (t) => {
  const a = await gw.newAccount();
  const broken = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200, 7)]);
  const up = await uploadJson(gw, a.id, 'default', { filename: 'broken.pdf', content: broken.toString('base64'), base64: true });
  t.is(up.status, 202);
  const end = await waitBuild(gw, a.id, 'default', up.body.id);
  t.is(end.state, 'failed');
  t.is(end.error.code, 'unreadable_document');
  t.regex(end.error.message, /PDF could not be read/);
  t.false(end.live);
  t.deepEqual(await livePages(gw, a.id), []);
  // A failed build is not a no-op target: the same bytes build again.
  const again = await uploadJson(gw, a.id, 'default', { filename: 'broken.pdf', content: broken.toString('base64'), base64: true });
  t.is(again.status, 202);
  t.not(again.body.id, up.body.id);
  await waitBuild(gw, a.id, 'default', again.body.id);
});

test('the same bytes uploaded twice at once make one build', async (t) => {
  const a = await gw.newAccount();
  const body = { filename: 'twin.md', content: '# Twin\n\nUploaded twice at the same moment; built once.' };
  const [x, y] = await Promise.all([uploadJson(gw, a.id, 'default', body), uploadJson(gw, a.id, 'default', body)]);
  t.is(x.body.id, y.body.id);
  t.deepEqual([x.status, y.status].sort(), [200, 202]);
  t.is((await waitBuild(gw, a.id, 'default', x.body.id)).state, 'succeeded');
  t.is(await gw.deps.db.KbBuild.countDocuments({ account_id: a.id }), 1);
});

test('a build left queued by a gateway that died before starting its workflow is started by the next read of it', async (t) => {
  const a = await gw.newAccount();
  const { documentIdOf } = await import('../../capabilities/knowledge/ingestion');
  const content = Buffer.from('# Orphan\n\nA build whose workflow was never started.');
  const documentId = documentIdOf(a.id, 'default', 'orphan.md');
  const r2Key = `kb/${a.id}/default/${documentId}/orphan`;
  await gw.deps.kbFiles.put(r2Key, { data: content, contentType: 'text/markdown', filename: 'orphan.md' });
  const now = Date.now();
  await gw.deps.db.KbDocument.create({
    _id: documentId, account_id: a.id, kb_id: 'default', filename: 'orphan.md', content_type: 'text/markdown', content_hash: 'h', r2_key: r2Key,
    size: content.length, live_build_id: null, live_seq: 0, deleted_seq: 0, deleted_at: null, created_at: new Date(now - 60_000), updated_at: new Date(now - 60_000),
  });
  const buildId = `build_orphan${now}`;
  await gw.deps.db.KbBuild.create({
    _id: buildId, doc_seq: `${documentId}#1`, account_id: a.id, kb_id: 'default', document_id: documentId, seq: 1, filename: 'orphan.md',
    format: 'markdown', content_type: 'text/markdown', content_hash: 'h', r2_key: r2Key, size: content.length, compiler: 'rules', model: 'rules',
    state: 'queued', pages_made: 0, warnings: [], error: null, created_at: new Date(now - 60_000), started_at: null, finished_at: null, updated_at: new Date(now - 60_000),
  });
  const end = await waitBuild(gw, a.id, 'default', buildId);
  t.is(end.state, 'succeeded');
  t.deepEqual((await livePages(gw, a.id)).map((p) => p.title), ['Orphan']);
});

test('a build whose publish runs out of time after its pointer flipped ends succeeded with a warning, not failed while live', async (t) => {
  const a = await gw.newAccount();
  const first = await load(gw, a.id, 'default', 'guide.md', GUIDE);
  t.is(first.state, 'succeeded');
  const live = await livePages(gw, a.id);
  t.true(live.length > 0);
  // What the build workflow sees when the publish activity's window closes after the flip (a store that stopped
  // answering for 20 minutes did so): the build still `running`, its pages live, and the failure recorded.
  await gw.deps.db.KbBuild.updateOne({ _id: first.id }, { $set: { state: 'running' }, $unset: { finished_at: 1 } });
  const { failBuild } = await import('../../capabilities/knowledge/publish');
  await failBuild(gw.deps, first.id, { code: 'build_failed', message: 'activity ScheduleToClose timeout' });
  const end = await waitBuild(gw, a.id, 'default', first.id, 5_000);
  t.is(end.state, 'succeeded', JSON.stringify(end));
  t.true(end.live);
  t.regex(end.warnings.at(-1), /went live, but its publish did not finish \(build_failed: activity ScheduleToClose timeout\)/);
  t.deepEqual((await livePages(gw, a.id)).map((p) => p._id), live.map((p) => p._id));

  // A build that never went live still ends failed, its pages removed.
  const second = await uploadJson(gw, a.id, 'default', { filename: 'other.md', content: GUIDE.replace('Gateway Guide', 'Other Guide') });
  const built = await waitBuild(gw, a.id, 'default', second.body.id);
  await gw.deps.db.KbDocument.updateOne({ _id: built.document_id }, { $set: { live_build_id: null } });
  await gw.deps.db.KbBuild.updateOne({ _id: built.id }, { $set: { state: 'running' } });
  await failBuild(gw.deps, built.id, { code: 'build_failed', message: 'gave up' });
  const failed = await waitBuild(gw, a.id, 'default', built.id, 5_000);
  t.is(failed.state, 'failed');
  t.is(await gw.deps.db.Page.countDocuments({ build_id: built.id }), 0);
});
