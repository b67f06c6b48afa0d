import test from 'ava';
import { compileRules, LinkIndex, LlmCompiler, MAX_PAGE_WEIGHT, resolveLinks, linkRequestsOf, missingTargetId } from '../../capabilities/knowledge/compiler';
import type { CompileInput } from '../../capabilities/knowledge/compiler';
import { weightOf } from '../../capabilities/knowledge/compiler/text';

/** The compiler is pure: these run without the stack. */
const input = (markdown: string, over: Partial<CompileInput> = {}): CompileInput => ({
  baseKey: 'acct_1/default', documentId: 'doc_1', filename: 'notes.md', r2Key: 'kb/acct_1/default/doc_1/x', compiledAt: '2026-01-01T00:00:00.000Z',
  doc: { format: 'markdown', parts: [{ markdown, page: null }] }, ...over,
});

test('front matter gives title, aliases and tags; headings inside code fences are not headings', (t) => {
  const md = '---\ntitle: Team Notes\naliases:\n  - Notes\ntags: [ops, "on-call"]\n---\nIntro paragraph about the team and how it works together.\n\n```sh\n# not a heading\necho hi\n```\n\n## Rota\n\nThe rota changes weekly. Everyone takes a turn.\n';
  const { pages } = compileRules(input(md));
  t.deepEqual(pages.map((p) => p.title), ['Team Notes', 'Rota']);
  t.true(pages[0].aliases.includes('Notes'));
  t.deepEqual(pages[0].tags.slice(0, 2), ['ops', 'on-call']);
  t.true(pages[0].body.includes('# not a heading'));
  t.is(pages[1].source.locator, 'Rota');
});

test('page ids are stable across rebuilds and differ between documents', (t) => {
  const md = '# A\n\nFirst section text that is long enough.\n\n# B\n\nSecond section text that is long enough.';
  const one = compileRules(input(md)).pages.map((p) => p.page_id);
  const edited = compileRules(input(md.replace('Second section', 'Edited second section'))).pages.map((p) => p.page_id);
  t.deepEqual(one, edited);
  const other = compileRules(input(md, { documentId: 'doc_2' })).pages.map((p) => p.page_id);
  t.is(one.filter((id) => other.includes(id)).length, 0);
  t.is(new Set(one).size, 2);
});

test('long sections are cut into bounded pages (also Chinese without spaces); thin ones join their parent', (t) => {
  const para = '这是一个很长的段落，用来测试切分。'.repeat(60);
  const md = `# 长文\n\n${Array(8).fill(para).join('\n\n')}\n\n## 附注\n\n短。`;
  const { pages } = compileRules(input(md));
  t.true(pages.length > 2);
  for (const p of pages) t.true(weightOf(p.body) <= MAX_PAGE_WEIGHT, `${weightOf(p.body)}`);
  t.true(pages[0].title.startsWith('长文 (1/'));
  t.is(pages.at(-1)!.title, '附注');
  const joined = compileRules(input('# Top\n\nA section with enough text to stand as a page of its own here.\n\n## Note\n\nShort.')).pages;
  t.is(joined.length, 1);
  t.true(joined[0].body.includes('**Note**\n\nShort.'));
});

test('confidence is low and needs_review set when there is little to go on', (t) => {
  const thin = compileRules(input('ok', { filename: 'x.txt', doc: { format: 'text', parts: [{ markdown: 'ok', page: null }] } })).pages[0];
  t.true(thin.confidence < 0.6);
  t.true(thin.needs_review);
  const rich = compileRules(input('# Billing\n\nCharges are exact integers. Every charge is written once. Refunds restore the balance in full.')).pages[0];
  t.true(rich.confidence >= 0.8);
  t.false(rich.needs_review);
});

test('PDF pages give page-number locators', (t) => {
  const { pages } = compileRules(input('', { filename: 'r.pdf', doc: { format: 'pdf', parts: [{ markdown: 'Page one text here.', page: 1 }, { markdown: 'Page two text here.', page: 2 }] } }));
  t.deepEqual(pages.map((p) => p.source.locator), ['p. 1', 'p. 2']);
});

test('link requests: wiki links, Markdown links to documents (not URLs or anchors), with anchors', (t) => {
  const r = linkRequestsOf('See [[Alpha]], [[Beta|the beta]], [[Gamma#Part]], [doc](./dir/other%20file.md#intro), [web](https://x.y/z.md), [here](#local), ![img](pic.png)');
  t.deepEqual(r.wiki, ['Alpha', 'Beta', 'Gamma']);
  t.deepEqual(r.files, [{ file: 'other file.md', anchor: 'intro' }]);
});

test('mentions: whole words for Latin script, anywhere for CJK; unresolved targets get a stable id', (t) => {
  const targets = [
    { page_id: 'p1', document_id: 'd1', filename: 'a.md', title: 'Wallet', aliases: ['Purse'], anchor: 'wallet', ordinal: 0 },
    { page_id: 'p2', document_id: 'd2', filename: 'b.md', title: '知识库', aliases: [], anchor: '知识库', ordinal: 0 },
    { page_id: 'p3', document_id: 'd3', filename: 'c.md', title: 'Keys', aliases: [], anchor: 'keys', ordinal: 0 },
  ];
  const index = new LinkIndex(targets);
  const links = resolveLinks('b/k', { page_id: 'me', body: 'The WALLET and wallets; 我们的知识库很好。 Monkeys. [[Nowhere]]', link_requests: { wiki: ['Nowhere'], files: [] } }, index);
  t.deepEqual(links, [
    { id: missingTargetId('b/k', 'Nowhere'), resolved: false, title: 'Nowhere' },
    { id: 'p1', resolved: true, title: 'Wallet' },
    { id: 'p2', resolved: true, title: '知识库' },
  ]);
  t.is(missingTargetId('b/k', 'nowhere'), missingTargetId('b/k', 'Nowhere'));
});

test('LLM compiler: model fields replace the rules ones, bad answers fall back per page with a warning', async (t) => {
  let n = 0;
  const c = new LlmCompiler('gpt-x', async (req) => {
    n++;
    if (req.headingPath.includes('B')) return { nonsense: true };
    return { title: `T ${req.headingPath}`, summary: 'S.', tags: ['Tag', '#two'] };
  });
  const r = await c.compile(input('# A\n\nText of section A is here, with enough words to be a real page.\n\n# B\n\nText of section B is here, with enough words to be a real page.'));
  t.is(n, 2);
  t.like(r.pages[0], { title: 'T A', summary: 'S.', tags: ['tag', 'two'], needs_review: false });
  t.is(r.pages[0].source.model, 'gpt-x');
  t.true(r.pages[0].aliases.includes('A'));
  t.like(r.pages[1], { title: 'B', needs_review: true });
  t.is(r.pages[1].source.model, 'rules');
  t.is(r.warnings.length, 1);
});
