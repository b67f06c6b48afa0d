import test from 'ava';
import type { Page } from '../../domain/knowledge/page';
import { BM25, FIELD_BOOST, PageIndex, snippetOf } from '../../capabilities/knowledge/search-index';
import { tokenize, tokensOf } from '../../capabilities/knowledge/tokenize';

/** The index is pure: these run without the stack. */
const page = (id: string, over: Partial<Page> = {}): Page => ({
  id, kb_id: 'default', title: '', summary: '', tags: [], aliases: [], links: [], body: '', confidence: 0.9, needs_review: false,
  source: { r2_key: 'k', filename: 'f.md', locator: '', compiled_at: '', model: 'rules' }, outgoing_links: [], ...over,
});

/**
 * The ranking written out plainly, term by term and field by field (the
 * definition the index precomputes): per field Okapi BM25 with its boost,
 * summed, times the number of distinct query terms the page holds.
 */
function reference(pages: Page[], q: string): Array<{ id: string; score: number }> {
  const fields = Object.keys(FIELD_BOOST) as Array<keyof typeof FIELD_BOOST>;
  const textOf = (p: Page, f: (typeof fields)[number]) => (f === 'aliases' ? p.aliases.join('\n') : f === 'tags' ? p.tags.join('\n') : p[f]);
  const toks = pages.map((p) => fields.map((f) => tokenize(textOf(p, f))));
  const n = pages.length;
  const avg = fields.map((_, f) => toks.reduce((s, t) => s + t[f].length, 0) / n || 1);
  const terms = [...new Set(tokenize(q))];
  const out: Array<{ id: string; score: number }> = [];
  pages.forEach((p, d) => {
    let score = 0;
    let matched = 0;
    for (const term of terms) {
      let has = false;
      fields.forEach((name, f) => {
        const tf = toks[d][f].filter((x) => x === term).length;
        if (!tf) return;
        has = true;
        const df = toks.filter((t) => t[f].includes(term)).length;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += FIELD_BOOST[name] * idf * ((tf * (BM25.k + 1)) / (tf + BM25.k * (1 - BM25.b + (BM25.b * toks[d][f].length) / avg[f])));
      });
      if (has) matched++;
    }
    if (matched) out.push({ id: p.id, score: score * matched });
  });
  return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

// A small seeded collection: words drawn unevenly from a vocabulary, so terms repeat within and across pages and fields.
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const vocab = ['wing', 'wings', 'flow', 'flowing', 'boundary', 'layer', 'shock', 'wave', 'heat', 'transfer', 'Mach', 'number', 'laminar', 'turbulent', 'pressure', 'drag', 'lift', 'the', 'of', '流体', '境界層', 'データ'];
const words = (k: number) => Array.from({ length: k }, () => vocab[Math.floor(rand() ** 2 * vocab.length)]).join(' ');
const collection = Array.from({ length: 60 }, (_, i) =>
  page(`pg_${String(i).padStart(3, '0')}`, { title: words(3), summary: words(10), tags: [words(1), words(1)], aliases: i % 3 ? [] : [words(2)], body: words(20 + Math.floor(rand() * 60)) }));

test('scores and order equal the BM25 definition, with exact totals and paging', (t) => {
  const index = new PageIndex(collection);
  for (const q of ['boundary layer flow', 'Mach number of a shock wave', 'heat', 'turbulent drag lift pressure wings', '流体 データ', 'nothing-here']) {
    const want = reference(collection, q);
    const got = index.search(q, 1000, 0);
    t.is(got.total, want.length, q);
    t.deepEqual(got.hits.map((h) => h.page.id), want.map((w) => w.id), q);
    got.hits.forEach((h, i) => t.true(Math.abs(h.score - want[i].score) < 1e-9, `${q}: ${h.score} vs ${want[i].score}`));
    const paged = index.search(q, 5, 3);
    t.deepEqual(paged.hits.map((h) => h.page.id), want.slice(3, 8).map((w) => w.id), `${q} paged`);
    t.is(paged.total, want.length);
  }
});

test('a hit names the query terms the page holds; repeated query words count once', (t) => {
  const index = new PageIndex([page('a', { title: 'Shock waves', body: 'A shock and another shock.' }), page('b', { body: 'Heat transfer.' })]);
  const once = index.search('shock', 10, 0);
  const twice = index.search('shock shock shocks', 10, 0);
  t.is(twice.hits[0].score, once.hits[0].score);
  t.deepEqual(index.search('shock heat', 10, 0).hits.map((h) => [h.page.id, h.terms]), [['a', ['shock']], ['b', ['heat']]]);
});

test('an index reusing an older one equals one built from scratch, also after pages change, come and go', (t) => {
  const old = new PageIndex(collection);
  const next = collection.slice(5).map((p, i) => (i % 7 ? p : { ...p, body: `${p.body} laminar boundary revised` }));
  next.push(page('pg_new', { title: 'Laminar flow', body: 'laminar laminar boundary layer' }));
  const reused = new PageIndex(next, [old]);
  const fresh = new PageIndex(next);
  for (const q of ['laminar boundary', 'revised', 'wing flow', 'データ']) {
    const a = reused.search(q, 100, 0);
    const b = fresh.search(q, 100, 0);
    t.deepEqual(a.hits.map((h) => [h.page.id, h.score]), b.hits.map((h) => [h.page.id, h.score]), q);
    t.is(a.total, b.total);
  }
  t.true(reused.search('revised', 100, 0).total > 0);
});

test('a search over several bases\' indexes equals one index of their union: scores, order, ties, totals and paging', (t) => {
  // Three bases; the same page ids in two of them (a tie broken by the base's place), one base without any query term.
  const a = collection.slice(0, 25);
  const b = [...collection.slice(25, 50), ...collection.slice(0, 4).map((p) => ({ ...p, kb_id: 'team' }))];
  const c = [page('zz', { kb_id: 'other', title: 'Unrelated', body: 'nothing in common' })];
  const whole = new PageIndex([...a, ...b, ...c]);
  const parts = [new PageIndex(a), new PageIndex(b), new PageIndex(c)];
  for (const q of ['boundary layer flow', 'Mach number of a shock wave', 'heat', 'turbulent drag lift pressure wings', '流体 データ', 'unrelated', 'nothing-here']) {
    const want = whole.search(q, 1000, 0);
    const got = PageIndex.searchUnion(parts, q, 1000, 0);
    t.is(got.total, want.total, q);
    t.deepEqual(got.hits.map((h) => [h.page.kb_id, h.page.id, h.score, h.terms]), want.hits.map((h) => [h.page.kb_id, h.page.id, h.score, h.terms]), q);
    for (const [limit, offset] of [[5, 0], [7, 3], [3, 40]]) {
      t.deepEqual(PageIndex.searchUnion(parts, q, limit, offset).hits.map((h) => [h.page.kb_id, h.page.id]), want.hits.slice(offset, offset + limit).map((h) => [h.page.kb_id, h.page.id]), `${q} ${limit}@${offset}`);
    }
  }
});

test('the tokeniser: case, stems, stop words, full-width letters, CJK segmentation, offsets', (t) => {
  t.deepEqual(tokenize('The Indexing of indexed PAGES, 2024'), ['index', 'index', 'page', '2024']);
  t.deepEqual(tokenize('ＦＬＯＷ flows'), ['flow', 'flow']);
  t.deepEqual(tokenize('café naïve'), ['café', 'naïve']);
  t.true(tokenize('知识库的检索').includes('知识'));
  const text = 'Boundary—layer “flow” über 流体';
  for (const tok of tokensOf(text)) t.true(tok.end > tok.start && text.slice(tok.start, tok.end).length > 0);
  t.deepEqual(tokensOf('  Wing flow').map((x) => [x.term, x.start, x.end]), [['wing', 2, 6], ['flow', 7, 11]]);
});

test('a snippet shows the passage with the most query terms; CJK terms are found; a title-only match shows the summary', (t) => {
  const filler = 'Nothing relevant is said in this sentence at all. '.repeat(12);
  const p = page('a', { summary: 'Summary.', body: `${filler}Here the boundary layer meets the shock wave and flows on. ${filler}` });
  const s = snippetOf(p, tokenize('shock boundary flowing'));
  t.true(s.includes('boundary layer meets the shock wave'), s);
  t.true(s.length <= 245);
  const cjk = page('b', { body: `${'無関係な文章です。'.repeat(40)}境界層の流体について説明する。${'無関係な文章です。'.repeat(40)}` });
  t.true(snippetOf(cjk, ['流体']).includes('境界層の流体'));
  t.is(snippetOf(page('c', { title: 'Drag', summary: 'About drag.', body: 'Unrelated text.' }), ['drag']), 'About drag.');
});
