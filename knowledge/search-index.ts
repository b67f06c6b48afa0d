import MiniSearch from 'minisearch';
import type { Page } from '../domain/knowledge/page';
import { tokenize, tokensOf } from './tokenize';

/**
 * A lexical index over a set of pages: MiniSearch's BM25+ ranking, weighted by
 * field (a term in the title counts more than one in the body), with the
 * project's tokeniser (knowledge/tokenize.ts) on both pages and queries.
 *
 * The weights and BM25 parameters were tuned on bench/relevance.ts (a public
 * test collection with judged queries) against a plain BM25.
 */
export const FIELD_BOOST = { title: 2.5, aliases: 2, tags: 1.5, summary: 1.2, body: 1 } as const;
type Field = keyof typeof FIELD_BOOST;
const FIELDS = Object.keys(FIELD_BOOST) as Field[];
export const BM25 = { k: 1.2, b: 0.75, d: 0.5 };

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
      searchOptions: { boost: FIELD_BOOST, bm25: BM25, combineWith: 'OR', prefix: false, fuzzy: false },
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
 * The passage of a page that best shows why it matched: the paragraph (or
 * window of a long paragraph) holding the most distinct query terms, then the
 * most occurrences, cut to about 240 characters around the first match. A page
 * that matched only on its title, tags or aliases shows its summary.
 */
export function snippetOf(page: Page, terms: readonly string[]): string {
  const wanted = new Set(terms);
  let best: { text: string; start: number; distinct: number; count: number } | null = null;
  for (const passage of passagesOf(page.body)) {
    const toks = tokensOf(passage);
    const seen = new Set<string>();
    let count = 0;
    let first = -1;
    for (const t of toks) {
      if (!wanted.has(t.term)) continue;
      seen.add(t.term);
      count++;
      if (first < 0) first = t.start;
    }
    if (seen.size === 0) continue;
    if (!best || seen.size > best.distinct || (seen.size === best.distinct && count > best.count)) {
      best = { text: passage, start: first, distinct: seen.size, count };
    }
  }
  if (!best) return clip(page.summary || plain(page.body), 0);
  return clip(best.text, best.start);
}

/** Paragraphs of a Markdown body as plain text; long ones split at sentence ends into windows. */
function passagesOf(body: string): string[] {
  const out: string[] = [];
  for (const para of body.split(/\n\s*\n/)) {
    const text = plain(para);
    if (!text) continue;
    if (text.length <= SNIPPET_CHARS * 2) {
      out.push(text);
      continue;
    }
    const sentences = text.split(/(?<=[.!?。！？])\s*/u);
    let cur = '';
    for (const s of sentences) {
      if (cur && cur.length + s.length > SNIPPET_CHARS * 2) {
        out.push(cur);
        cur = '';
      }
      cur += (cur && !/[。！？]$/u.test(cur) ? ' ' : '') + s;
    }
    if (cur) out.push(cur);
  }
  return out;
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
