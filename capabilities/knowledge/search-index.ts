import type { Page } from '../../domain/knowledge/page';
import { setImmediate } from 'node:timers/promises';
import { eachTerm, termOf, tokenize } from './tokenize';

/**
 * A lexical index over a set of pages: BM25 per field (title, aliases, tags,
 * summary, body), weighted by field and summed, then multiplied by the number
 * of distinct query terms the page holds (a coordination factor: pages with
 * more of the query rank first), with the project's tokeniser
 * (capabilities/knowledge/tokenize.ts) on both pages and queries.
 *
 * This is the ranking MiniSearch 7 computes (same formula; MiniSearch was the
 * first implementation and is what dev/bench/relevance.ts was tuned with). Each
 * term keeps one postings list: page numbers in an Int32Array and the term's
 * count in each of the five fields in a Uint16Array; each term also keeps its
 * document frequency per field, and each page its field lengths. A search
 * computes a posting's field-weighted BM25 sum from these and the collection's
 * statistics (page count, document frequencies, average field lengths), adds
 * it into one reusable score buffer with no object per matching page, and
 * total_hits is exact (every posting of every query term is visited: at 10,000
 * pages that is at most a few tens of thousands of postings). Because the
 * statistics are read at query time, a search over several bases' indexes
 * (PageIndex.searchUnion) takes them summed over the bases and scores exactly
 * as one index of their union would, without building or keeping one.
 *
 * Building tokenises every field of every page; that per-page analysis (terms
 * and counts per field) is kept, so the index of the base's next version (one
 * document rebuilt) reuses it and tokenises only pages whose text changed.
 *
 * The weights and BM25 parameters were tuned on dev/bench/relevance.ts (a public
 * test collection with judged queries) against a plain BM25.
 */
export const FIELD_BOOST = { title: 2, aliases: 2, tags: 1.5, summary: 1.2, body: 1 } as const;
type Field = keyof typeof FIELD_BOOST;
const FIELDS = Object.keys(FIELD_BOOST) as Field[];
const BOOSTS = FIELDS.map((f) => FIELD_BOOST[f]);
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

/** One page's terms: per field, its distinct terms with their counts, and its length in terms. */
interface PageAnalysis {
  /** The texts analysed (to tell whether a later version of the page can reuse this). */
  texts: string[];
  terms: string[][];
  tfs: Uint16Array[];
  lengths: number[];
}

const fieldTexts = (p: Page): string[] => [p.title, p.aliases.join('\n'), p.tags.join('\n'), p.summary, p.body];

function analyse(texts: string[]): PageAnalysis {
  const terms: string[][] = [];
  const tfs: Uint16Array[] = [];
  const lengths: number[] = [];
  for (const text of texts) {
    const counts = new Map<string, number>();
    let length = 0;
    eachTerm(text, (t) => {
      counts.set(t, (counts.get(t) ?? 0) + 1);
      length++;
    });
    terms.push([...counts.keys()]);
    tfs.push(Uint16Array.from(counts.values(), (c) => Math.min(c, 0xffff)));
    lengths.push(length);
  }
  return { texts, terms, tfs, lengths };
}

const sameTexts = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** What an index is made of (buildSteps makes it). */
interface BuiltIndex {
  termIds: Map<string, number>;
  idRank: Int32Array;
  analyses: PageAnalysis[];
  starts: Int32Array;
  docs: Int32Array;
  tfs: Uint16Array;
  fieldDf: Int32Array;
  lengths: Int32Array;
  totals: number[];
}

const NF = FIELDS.length;

/** Pages between two checks of the time in buildSteps. */
const STEP_PAGES = 32;

/**
 * The index's construction, pausing (`yield`) every STEP_PAGES pages of each pass: PageIndex's
 * constructor runs it to the end at once, PageIndex.build with the event loop free between slices.
 */
function* buildSteps(pages: readonly Page[], reuse: readonly PageIndex[]): Generator<void, BuiltIndex> {
  const n = pages.length;
  const known = new Map<string, PageAnalysis>();
  for (const other of reuse) other.pages.forEach((p, d) => known.set(`${p.kb_id}\u0000${p.id}`, other.analysisOf(d)));
  const analyses: PageAnalysis[] = new Array(n);
  for (let d = 0; d < n; d++) {
    const p = pages[d];
    const texts = fieldTexts(p);
    const prior = known.get(`${p.kb_id}\u0000${p.id}`);
    analyses[d] = prior && sameTexts(prior.texts, texts) ? prior : analyse(texts);
    if (d % STEP_PAGES === STEP_PAGES - 1) yield;
  }
  known.clear();
  const order = Array.from(pages.keys()).sort((a, b) => (pages[a].id < pages[b].id ? -1 : pages[a].id > pages[b].id ? 1 : a - b));
  const idRank = new Int32Array(n);
  order.forEach((d, rank) => (idRank[d] = rank));
  yield;

  // Pass 1: term numbers, document frequency per field and over all fields, field lengths.
  const ids = new Map<string, number>();
  const fieldDf: number[] = [];
  const anyDf: number[] = [];
  const lastDoc: number[] = [];
  const totals = FIELDS.map(() => 0);
  const lengths = new Int32Array(n * NF);
  const numbered: Int32Array[][] = new Array(n);
  for (let d = 0; d < n; d++) {
    const a = analyses[d];
    numbered[d] = a.terms.map((terms, f) => {
      totals[f] += a.lengths[f];
      lengths[d * NF + f] = a.lengths[f];
      const out = new Int32Array(terms.length);
      for (let i = 0; i < terms.length; i++) {
        let id = ids.get(terms[i]);
        if (id === undefined) {
          id = ids.size;
          ids.set(terms[i], id);
          anyDf.push(0);
          lastDoc.push(-1);
          for (let g = 0; g < NF; g++) fieldDf.push(0);
        }
        out[i] = id;
        fieldDf[id * NF + f]++;
        if (lastDoc[id] !== d) {
          lastDoc[id] = d;
          anyDf[id]++;
        }
      }
      return out;
    });
    if (d % STEP_PAGES === STEP_PAGES - 1) yield;
  }
  const nTerms = ids.size;
  const starts = new Int32Array(nTerms + 1);
  for (let id = 0; id < nTerms; id++) starts[id + 1] = starts[id] + anyDf[id];
  const docs = new Int32Array(starts[nTerms]);
  const tfs = new Uint16Array(starts[nTerms] * NF);
  yield;

  // Pass 2: postings in page order, each with the term's count in each field of the page.
  const cursor = starts.slice(0, nTerms);
  const lastPos = new Int32Array(nTerms).fill(-1);
  for (let d = 0; d < n; d++) {
    const a = analyses[d];
    for (let f = 0; f < NF; f++) {
      const termIds = numbered[d][f];
      const counts = a.tfs[f];
      for (let i = 0; i < termIds.length; i++) {
        const id = termIds[i];
        let pos = lastPos[id];
        if (pos < 0 || docs[pos] !== d) {
          pos = cursor[id]++;
          lastPos[id] = pos;
          docs[pos] = d;
        }
        tfs[pos * NF + f] = counts[i];
      }
    }
    if (d % STEP_PAGES === STEP_PAGES - 1) yield;
  }
  return { termIds: ids, idRank, analyses, starts, docs, tfs, fieldDf: Int32Array.from(fieldDf), lengths, totals };
}

function runToEnd<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Estimated bytes of what an index holds beyond its pages, fitted on dev/bench/search-memory.ts's
 * pages (V8 heap plus typed-array buffers after a full collection; docs/knowledge.md): the typed arrays
 * exactly, plus each page's analysis (its fields' term lists and counts) and each distinct term.
 */
const ANALYSIS_BYTES_PER_ENTRY = 18;
const ANALYSIS_BYTES_PER_PAGE = 900;
const BYTES_PER_TERM = 100;

export class PageIndex {
  /** Term -> its number; its postings are docs[starts[id] .. starts[id + 1]), with tfs[NF * posting + field]. */
  private readonly termIds: Map<string, number>;
  private readonly starts: Int32Array;
  private readonly docs: Int32Array;
  /** Each posting's term count in each field (NF a posting). */
  private readonly tfs: Uint16Array;
  /** Each term's number of pages holding it in each field (NF a term). */
  private readonly fieldDf: Int32Array;
  /** Each page's length in terms of each field (NF a page), and their sums over the pages. */
  private readonly lengths: Int32Array;
  private readonly totals: readonly number[];
  /** BM25's length normalisation of each page's fields (NF a page) with this index's own averages: a search of this index alone reads it. */
  private readonly norms: Float64Array;
  /** Each page's place in page id order (ties are broken by page id). */
  private readonly idRank: Int32Array;
  private readonly analyses: PageAnalysis[];
  private readonly scores: Float64Array;
  private readonly masks: Uint32Array;
  private readonly touched: Int32Array;
  /** Estimated memory of the index (without its pages), for the corpus cache's budget (capabilities/knowledge/corpus.ts). */
  readonly bytes: number;

  /** `reuse`: indexes whose page analyses may be taken over for pages with the same id and text; `built`: what PageIndex.build made. */
  constructor(readonly pages: readonly Page[], reuse: readonly PageIndex[] | BuiltIndex = []) {
    const built = Array.isArray(reuse) ? runToEnd(buildSteps(pages, reuse as readonly PageIndex[])) : (reuse as BuiltIndex);
    const n = pages.length;
    this.scores = new Float64Array(n);
    this.masks = new Uint32Array(n);
    this.touched = new Int32Array(n);
    this.termIds = built.termIds;
    this.idRank = built.idRank;
    this.analyses = built.analyses;
    this.starts = built.starts;
    this.docs = built.docs;
    this.tfs = built.tfs;
    this.fieldDf = built.fieldDf;
    this.lengths = built.lengths;
    this.totals = built.totals;
    this.norms = new Float64Array(n * NF);
    const avgs = averages(n, this.totals);
    for (let d = 0; d < n; d++) for (let f = 0; f < NF; f++) this.norms[d * NF + f] = normOf(this.lengths[d * NF + f], avgs[f]);
    let entries = 0;
    for (let i = 0; i < this.fieldDf.length; i++) entries += this.fieldDf[i];
    const arrays = [this.scores, this.masks, this.touched, this.idRank, this.starts, this.docs, this.tfs, this.fieldDf, this.lengths, this.norms];
    this.bytes = arrays.reduce((s, a) => s + a.byteLength, 0) + entries * ANALYSIS_BYTES_PER_ENTRY + n * ANALYSIS_BYTES_PER_PAGE + this.termIds.size * BYTES_PER_TERM;
  }

  /**
   * The same index, built in slices of about `sliceMs` of this thread's time with the event loop free
   * between them: a gateway keeps answering other requests while the first search after a change
   * tokenises a large base (about 2 s of work at 5,000 pages in one piece).
   */
  static async build(pages: readonly Page[], reuse: readonly PageIndex[] = [], sliceMs = 10): Promise<PageIndex> {
    const steps = buildSteps(pages, reuse);
    let sliceStart = performance.now();
    for (;;) {
      const r = steps.next();
      if (r.done) return new PageIndex(pages, r.value);
      if (performance.now() - sliceStart >= sliceMs) {
        await setImmediate();
        sliceStart = performance.now();
      }
    }
  }

  /** The `d`-th page's analysis (a later index of the same pages takes it over). */
  analysisOf(d: number): PageAnalysis {
    return this.analyses[d];
  }

  get size(): number {
    return this.pages.length;
  }

  /** The pages matching at least one query term: their number, and `limit` of them from `offset`, best first (ties by page id). */
  search(q: string, limit = Number.MAX_SAFE_INTEGER, offset = 0): { total: number; hits: IndexedHit[] } {
    return PageIndex.searchUnion([this], q, limit, offset);
  }

  /**
   * A search of the union of `parts`' pages as one collection, with the same scores, order and total
   * as one index built over all their pages (in `parts` order): BM25's document frequencies, page
   * count and average field lengths are the union's, summed from the parts' at query time, so no
   * index of the union is built or kept. Ties: page id, then the part's place in `parts`.
   */
  static searchUnion(parts: readonly PageIndex[], q: string, limit = Number.MAX_SAFE_INTEGER, offset = 0): { total: number; hits: IndexedHit[] } {
    const terms = [...new Set(tokenize(q))].filter((t) => parts.some((p) => p.termIds.has(t))).slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0) return { total: 0, hits: [] };
    let n = 0;
    const totals = FIELDS.map(() => 0);
    for (const p of parts) {
      n += p.size;
      for (let f = 0; f < NF; f++) totals[f] += p.totals[f];
    }
    const avgs = averages(n, totals);
    const weights = new Float64Array(terms.length * NF);
    terms.forEach((t, ti) => {
      const ids = parts.map((p) => p.termIds.get(t));
      for (let f = 0; f < NF; f++) {
        let df = 0;
        parts.forEach((p, pi) => ids[pi] !== undefined && (df += p.fieldDf[ids[pi]! * NF + f]));
        weights[ti * NF + f] = BOOSTS[f] * Math.log(1 + (n - df + 0.5) / (df + 0.5));
      }
    });
    const counts = parts.map((p) => p.accumulate(terms, weights, parts.length === 1 ? null : avgs));
    const m = offset + limit;
    const best = parts.flatMap((p, pi) => p.best(counts[pi], m).map((doc) => ({ p, pi, doc, score: p.scores[doc] })));
    if (parts.length > 1) best.sort((x, y) => y.score - x.score || (x.p.pages[x.doc].id < y.p.pages[y.doc].id ? -1 : x.p.pages[x.doc].id > y.p.pages[y.doc].id ? 1 : x.pi - y.pi || x.doc - y.doc));
    const hits = best.slice(offset, m).map(({ p, doc, score }) => ({ page: p.pages[doc], score, terms: terms.filter((_, ti) => p.masks[doc] & (1 << ti)) }));
    parts.forEach((p, pi) => p.reset(counts[pi]));
    return { total: counts.reduce((s, c) => s + c, 0), hits };
  }

  /**
   * Adds each query term's field-weighted BM25 (`weights`: NF a term, the collection's idf times the
   * field's boost; `avgs`: the collection's average field lengths, null when it is this index's own) into the score buffer, one
   * posting at a time, fields in order, then multiplies by the matched-term count; returns the
   * number of pages touched (the first `count` of `touched`).
   */
  private accumulate(terms: readonly string[], weights: Float64Array, avgs: Float64Array | null): number {
    const { scores, masks, touched, docs, tfs, starts, lengths, norms } = this;
    const { k } = BM25;
    let count = 0;
    for (let ti = 0; ti < terms.length; ti++) {
      const id = this.termIds.get(terms[ti]);
      if (id === undefined) continue;
      const bit = 1 << ti;
      for (let i = starts[id], end = starts[id + 1]; i < end; i++) {
        const doc = docs[i];
        let impact = 0;
        for (let f = 0; f < NF; f++) {
          const tf = tfs[i * NF + f];
          if (tf === 0) continue;
          const norm = avgs ? normOf(lengths[doc * NF + f], avgs[f]) : norms[doc * NF + f];
          impact += weights[ti * NF + f] * ((tf * (k + 1)) / (tf + norm));
        }
        if (masks[doc] === 0) touched[count++] = doc;
        masks[doc] |= bit;
        scores[doc] += impact;
      }
    }
    for (let i = 0; i < count; i++) scores[touched[i]] *= popcount(masks[touched[i]]);
    return count;
  }

  /** Clears what accumulate wrote. */
  private reset(count: number): void {
    const { scores, masks, touched } = this;
    for (let i = 0; i < count; i++) {
      scores[touched[i]] = 0;
      masks[touched[i]] = 0;
    }
  }

  /** The `m` best of the first `count` touched pages, best first (score, then page id), without sorting them all. */
  private best(count: number, m: number): number[] {
    const { scores, idRank, touched } = this;
    const better = (a: number, b: number) => scores[a] > scores[b] || (scores[a] === scores[b] && idRank[a] < idRank[b]);
    if (m >= count / 4) {
      const all = Array.from(touched.subarray(0, count));
      return all.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0)).slice(0, m);
    }
    // A sorted list of the best m so far: most candidates lose to its last entry and cost one comparison.
    const top: number[] = [];
    for (let i = 0; i < count; i++) {
      const x = touched[i];
      if (top.length === m && !better(x, top[m - 1])) continue;
      let lo = 0;
      let hi = top.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (better(x, top[mid])) hi = mid;
        else lo = mid + 1;
      }
      top.splice(lo, 0, x);
      if (top.length > m) top.pop();
    }
    return top;
  }
}

/** A collection's average field lengths (1 for an empty field or collection). */
const averages = (n: number, totals: readonly number[]) => Float64Array.from(totals, (t) => (n ? t / n : 0) || 1);
/** BM25's length normalisation of a field of `length` terms where the average is `avg`. */
const normOf = (length: number, avg: number) => BM25.k * (1 - BM25.b + (BM25.b * length) / avg);

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

const SNIPPET_CHARS = 240;

/**
 * The passage of a page that best shows why it matched: the ~240-character
 * window of its body holding the most distinct query terms (then the most
 * occurrences), cut on word boundaries. Occurrences are found in the
 * plain-text body without tokenising all of it: one case-insensitive pass of
 * a regular expression of the terms' stems as literal prefixes (no Unicode
 * property classes: those cost tens of milliseconds to compile per query)
 * finds candidate words, and each candidate word alone is reduced to its term
 * by the tokeniser and kept if it is a query term; CJK and Thai terms are
 * found literally. A page that matched only on its title, tags or aliases
 * shows its summary.
 */
export function snippetOf(page: Page, terms: readonly string[]): string {
  const text = plain(page.body);
  const wanted = new Set(terms);
  const hits: Array<{ at: number; term: string }> = [];
  const finder = finderOf([...wanted].filter((t) => !CJK_RUN.test(t)));
  if (finder) {
    finder.lastIndex = 0;
    for (let m = finder.exec(text); m; m = finder.exec(text)) {
      const at = m.index;
      if (at > 0 && LETTER_OR_DIGIT.test(text[at - 1])) continue;
      WORD_AT.lastIndex = at;
      const word = WORD_AT.exec(text)?.[0] ?? m[0];
      finder.lastIndex = at + word.length;
      const term = termOf(word);
      if (term && wanted.has(term)) hits.push({ at, term });
    }
  }
  const literal = [...wanted].filter((t) => CJK_RUN.test(t));
  if (literal.length) {
    // These scripts have no case: the term is found as written.
    for (const term of literal) {
      for (let at = text.indexOf(term); at >= 0; at = text.indexOf(term, at + term.length)) hits.push({ at, term });
    }
    hits.sort((a, b) => a.at - b.at);
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
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const WORD_AT = /[\p{L}\p{M}\p{N}]+/uy;
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const finders = new Map<string, RegExp | null>();

/** A global, case-insensitive expression matching the start of any word that may reduce to one of the terms (cached per term set). */
function finderOf(terms: string[]): RegExp | null {
  const key = terms.join('\u0000');
  let re = finders.get(key);
  if (re === undefined) {
    // Porter stems are prefixes of their words, except a final y turned i ("studi" from "study").
    const alts = [...new Set(terms.map((t) => escapeRe(t.length > 3 && t.endsWith('i') ? t.slice(0, -1) : t)))];
    re = alts.length ? new RegExp(alts.join('|'), 'gi') : null;
    if (finders.size >= 256) finders.delete(finders.keys().next().value!);
    finders.set(key, re);
  }
  return re;
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
    // Only runs and non-space whitespace: replacing every single space costs half of this function.
    .replace(/\s{2,}|[^\S ]/g, ' ')
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
