import MiniSearch from 'minisearch';
import type { Page } from '../domain/knowledge/page';
import { termOf, tokenize } from './tokenize';

/**
 * A lexical index over a set of pages: MiniSearch's BM25+ ranking, weighted by
 * field (a term in the title counts more than one in the body), with the
 * project's tokeniser (knowledge/tokenize.ts) on both pages and queries.
 *
 * The weights and BM25 parameters were tuned on bench/relevance.ts (a public
 * test collection with judged queries) against a plain BM25.
 */
export const FIELD_BOOST = { title: 2, aliases: 2, tags: 1.5, summary: 1.2, body: 1 } as const;
type Field = keyof typeof FIELD_BOOST;
const FIELDS = Object.keys(FIELD_BOOST) as Field[];
/** Okapi BM25 (d = 0: MiniSearch's BM25+ lower bound off, which ranked worse on the bench). */
export const BM25 = { k: 1.5, b: 0.75, d: 0 };

export interface IndexedHit {
  page: Page;
  score: number;
  /** Query terms (as index terms) that this page contains. */
  terms: string[];
}

interface Doc {
  i: number;
  title: string;
  aliases: string;
  tags: string;
  summary: string;
  body: string;
}

export class PageIndex {
  private readonly mini: MiniSearch<Doc>;

  constructor(readonly pages: readonly Page[]) {
    this.mini = new MiniSearch<Doc>({
      idField: 'i',
      fields: FIELDS,
      storeFields: [],
      tokenize: (text) => tokenize(text),
      processTerm: (term) => term,
      // Queries arrive already tokenised (search() below): split them on spaces only, so no term is stemmed twice.
      searchOptions: { boost: FIELD_BOOST, bm25: BM25, combineWith: 'OR', prefix: false, fuzzy: false, tokenize: (q) => q.split(' ') },
    });
    this.mini.addAll(pages.map((p, i) => ({
      i,
      title: p.title,
      aliases: p.aliases.join('\n'),
      tags: p.tags.join('\n'),
      summary: p.summary,
      body: p.body,
    })));
  }

  get size(): number {
    return this.pages.length;
  }

  /** Every page matching at least one query term, best first (ties by page id, so paging is stable). */
  search(q: string): IndexedHit[] {
    const terms = [...new Set(tokenize(q))];
    if (terms.length === 0) return [];
    const results = this.mini.search(terms.join(' '));
    const hits = results.map((r) => ({ page: this.pages[r.id as number], score: r.score, terms: r.terms }));
    hits.sort((a, b) => b.score - a.score || (a.page.id < b.page.id ? -1 : a.page.id > b.page.id ? 1 : 0));
    return hits;
  }
}

const SNIPPET_CHARS = 240;

/**
 * The passage of a page that best shows why it matched: the ~240-character
 * window of its body holding the most distinct query terms (then the most
 * occurrences), cut on word boundaries. Occurrences are found with one regular
 * expression pass over the plain-text body (candidate words start with a
 * term's stem; each candidate is checked by reducing that word alone to its
 * term), so a snippet does not tokenise the whole page. A page that matched
 * only on its title, tags or aliases shows its summary.
 */
export function snippetOf(page: Page, terms: readonly string[]): string {
  const text = plain(page.body);
  const wanted = new Set(terms);
  const finder = finderOf(terms);
  const hits: Array<{ at: number; term: string }> = [];
  if (finder) {
    for (const m of text.matchAll(finder)) {
      const word = m[0];
      const term = CJK_RUN.test(word) ? word.toLowerCase() : termOf(word);
      if (term && wanted.has(term)) hits.push({ at: m.index!, term });
    }
  }
  if (hits.length === 0) return clip(page.summary || text, 0);
  const span = SNIPPET_CHARS - 40;
  let best = { i: 0, distinct: 0, count: 0 };
  const inWindow = new Map<string, number>();
  for (let i = 0, j = 0; i < hits.length; i++) {
    while (j < hits.length && hits[j].at - hits[i].at <= span) {
      inWindow.set(hits[j].term, (inWindow.get(hits[j].term) ?? 0) + 1);
      j++;
    }
    const count = j - i;
    if (inWindow.size > best.distinct || (inWindow.size === best.distinct && count > best.count)) best = { i, distinct: inWindow.size, count };
    const left = inWindow.get(hits[i].term)! - 1;
    if (left === 0) inWindow.delete(hits[i].term);
    else inWindow.set(hits[i].term, left);
  }
  return clip(text, hits[best.i].at);
}

const CJK_RUN = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]+$/u;
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Finds words that may carry one of the terms: Latin stems as word prefixes, CJK terms literally. */
function finderOf(terms: readonly string[]): RegExp | null {
  const alts = [...new Set(terms.map((t) => {
    if (CJK_RUN.test(t)) return escapeRe(t);
    // Porter stems are prefixes of their words, except a final y turned i ("studi" from "study").
    const prefix = t.length > 3 && t.endsWith('i') ? t.slice(0, -1) : t;
    return `(?<![\\p{L}\\p{N}])${escapeRe(prefix)}[\\p{L}\\p{M}\\p{N}]*`;
  }))];
  return alts.length ? new RegExp(alts.join('|'), 'giu') : null;
}

/** Markdown markup removed, whitespace collapsed. */
function plain(md: string): string {
  return md
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[\[([^\]|]+)(?:\|([^\]]+))?\]\]/g, (_m, a: string, b?: string) => b ?? a)
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+/gm, '')
    .replace(/[*_`~]{1,3}/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** About SNIPPET_CHARS characters of `text` around `at`, on word boundaries where it can, with ellipses where cut. */
function clip(text: string, at: number): string {
  if (text.length <= SNIPPET_CHARS) return text;
  let start = Math.max(0, at - Math.floor(SNIPPET_CHARS / 4));
  if (start > 0) {
    const space = text.indexOf(' ', start);
    if (space >= 0 && space < at) start = space + 1;
  }
  let end = Math.min(text.length, start + SNIPPET_CHARS);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start + SNIPPET_CHARS / 2) end = space;
  }
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
}
