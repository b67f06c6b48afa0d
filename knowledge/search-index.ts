import type { Page } from '../domain/knowledge/page';
import { termOf, tokenize } from './tokenize';

/**
 * A lexical index over a set of pages: BM25 per field (title, aliases, tags,
 * summary, body), weighted by field and summed, then multiplied by the number
 * of distinct query terms the page holds (a coordination factor: pages with
 * more of the query rank first), with the project's tokeniser
 * (knowledge/tokenize.ts) on both pages and queries.
 *
 * This is the ranking MiniSearch 7 computes (same formula; MiniSearch was the
 * first implementation and is what bench/relevance.ts was tuned with), kept
 * in flat postings arrays and one reusable score buffer: MiniSearch builds a
 * result object with match details for every matching document, which for a
 * broad query on 10,000 pages cost ~150 ms of CPU; this costs a few ms.
 *
 * The weights and BM25 parameters were tuned on bench/relevance.ts (a public
 * test collection with judged queries) against a plain BM25.
 */
export const FIELD_BOOST = { title: 2, aliases: 2, tags: 1.5, summary: 1.2, body: 1 } as const;
type Field = keyof typeof FIELD_BOOST;
const FIELDS = Object.keys(FIELD_BOOST) as Field[];
/** Okapi BM25. */
export const BM25 = { k: 1.5, b: 0.75 };
/** Query terms beyond this many are ignored (a page's matched terms are kept as a 32-bit mask). */
const MAX_QUERY_TERMS = 32;

export interface IndexedHit {
  page: Page;
  score: number;
  /** Query terms (as index terms) that this page contains. */
  terms: string[];
}

/** A term's documents and frequencies in one field: typed arrays, so the collector never scans them. */
interface Postings {
  docs: Int32Array;
  tfs: Uint16Array;
}

interface FieldIndex {
  boost: number;
  lengths: Float64Array;
  avgLength: number;
  postings: Map<string, Postings>;
}

const byScoreThenId = (pages: readonly Page[], scores: Float64Array) => (a: number, b: number) =>
  scores[b] - scores[a] || (pages[a].id < pages[b].id ? -1 : pages[a].id > pages[b].id ? 1 : 0);

export class PageIndex {
  private readonly fields: FieldIndex[];
  private readonly scores: Float64Array;
  private readonly masks: Uint32Array;

  constructor(readonly pages: readonly Page[]) {
    const n = pages.length;
    this.scores = new Float64Array(n);
    this.masks = new Uint32Array(n);
    this.fields = FIELDS.map((f) => {
      const lengths = new Float64Array(n);
      const building = new Map<string, { docs: number[]; tfs: number[] }>();
      let total = 0;
      pages.forEach((p, doc) => {
        const text = f === 'aliases' ? p.aliases.join('\n') : f === 'tags' ? p.tags.join('\n') : p[f];
        const terms = tokenize(text);
        lengths[doc] = terms.length;
        total += terms.length;
        const tf = new Map<string, number>();
        for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
        for (const [t, c] of tf) {
          let pl = building.get(t);
          if (!pl) building.set(t, (pl = { docs: [], tfs: [] }));
          pl.docs.push(doc);
          pl.tfs.push(Math.min(c, 0xffff));
        }
      });
      const postings = new Map<string, Postings>();
      for (const [t, pl] of building) postings.set(t, { docs: Int32Array.from(pl.docs), tfs: Uint16Array.from(pl.tfs) });
      return { boost: FIELD_BOOST[f], lengths, avgLength: n ? total / n : 0, postings };
    });
  }

  get size(): number {
    return this.pages.length;
  }

  /** The pages matching at least one query term: their number, and `limit` of them from `offset`, best first (ties by page id). */
  search(q: string, limit = Number.MAX_SAFE_INTEGER, offset = 0): { total: number; hits: IndexedHit[] } {
    const terms = [...new Set(tokenize(q))].slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0 || this.pages.length === 0) return { total: 0, hits: [] };
    const { scores, masks } = this;
    const n = this.pages.length;
    const touched: number[] = [];
    const { k, b } = BM25;
    terms.forEach((term, ti) => {
      const bit = 1 << ti;
      for (const f of this.fields) {
        const pl = f.postings.get(term);
        if (!pl) continue;
        const df = pl.docs.length;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        const weight = f.boost * idf;
        const avg = f.avgLength || 1;
        for (let i = 0; i < df; i++) {
          const doc = pl.docs[i];
          const tf = pl.tfs[i];
          if (masks[doc] === 0) touched.push(doc);
          masks[doc] |= bit;
          scores[doc] += weight * ((tf * (k + 1)) / (tf + k * (1 - b + (b * f.lengths[doc]) / avg)));
        }
      }
    });
    for (const doc of touched) scores[doc] *= popcount(masks[doc]);
    const hits = topOf(touched, offset + limit, byScoreThenId(this.pages, scores)).slice(offset).map((doc) => ({
      page: this.pages[doc],
      score: scores[doc],
      terms: terms.filter((_, ti) => masks[doc] & (1 << ti)),
    }));
    for (const doc of touched) {
      scores[doc] = 0;
      masks[doc] = 0;
    }
    return { total: touched.length, hits };
  }
}

/** The `m` best of `items` in order, without sorting them all (one pass, insertion into a short sorted list). */
function topOf(items: number[], m: number, cmp: (a: number, b: number) => number): number[] {
  if (m >= items.length / 4) return items.sort(cmp).slice(0, m);
  const top: number[] = [];
  for (const x of items) {
    if (top.length === m && cmp(x, top[m - 1]) >= 0) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(top[mid], x) <= 0) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, x);
    if (top.length > m) top.pop();
  }
  return top;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
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
