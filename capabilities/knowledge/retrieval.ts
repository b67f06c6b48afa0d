import type { Page } from '../../domain/knowledge/page';
import { baseKey, type BaseRef } from './page-store';
import type { CorpusCache } from './corpus';
import { PageIndex, snippetOf, type IndexedHit } from './search-index';
import { tokenize } from './tokenize';

export interface RetrievalHit {
  page: Page;
  score: number;
  /** The best matching passage, with the query terms in it. */
  snippet: string;
  /** The query's index terms (capabilities/knowledge/tokenize.ts) that this page contains. */
  terms: string[];
}

export interface RetrievalResult {
  /** Every page matching the query in these bases, independent of paging. */
  total: number;
  /** The query's distinct index terms (stop words dropped, stemmed); empty when nothing is searchable. */
  queryTerms: string[];
  hits: RetrievalHit[];
}

/**
 * The one retrieval service behind every surface that searches a base: the
 * REST search, the MCP `search_wiki` tool, the Dify retrieval endpoint and
 * agents' knowledge injection.
 *
 * Each base's cached index (capabilities/knowledge/corpus.ts); several bases are
 * searched as one collection (PageIndex.searchUnion: BM25's document
 * frequencies and lengths are those of the whole searched collection, so
 * scores from different bases compare) straight from their own indexes: no
 * index of a union is built or kept, so a scope of its own (a member's
 * personal base with the team bases) or a base's new version costs no copy of
 * the other bases' indexes.
 */
export class Retrieval {
  constructor(private readonly corpora: CorpusCache) {}

  /**
   * `versions`: the bases' current versions (same order as `bases`), when the caller read them in its
   * own round trip (gateway/chat/agent-prelude.ts); `snippets: false` when the caller does not show them.
   */
  async search(bases: BaseRef[], q: string, opts: SearchOptions): Promise<RetrievalResult> {
    const unique = new Map<string, { ref: BaseRef; version: number }>();
    bases.forEach((b, i) => unique.set(baseKey(b), { ref: b, version: opts.versions?.[i] ?? 0 }));
    const queryTerms = [...new Set(tokenize(q))];
    if (unique.size === 0 || queryTerms.length === 0) return { total: 0, queryTerms, hits: [] };
    const refs = [...unique.values()];
    const corpora = await this.corpora.getMany(refs.map((u) => u.ref), opts.versions ? refs.map((u) => u.version) : undefined);
    const offset = Math.max(0, Math.floor(opts.offset));
    const limit = Math.max(0, Math.floor(opts.limit));
    const found = PageIndex.searchUnion(await Promise.all(corpora.map((c) => c.searchIndex())), q, limit, offset);
    return { total: found.total, queryTerms, hits: found.hits.map(opts.snippets === false ? toBareHit : toHit) };
  }
}

export interface SearchOptions {
  limit: number;
  offset: number;
  versions?: readonly number[];
  snippets?: boolean;
}

function toBareHit(h: IndexedHit): RetrievalHit {
  return { page: h.page, score: Math.round(h.score * 10_000) / 10_000, snippet: '', terms: h.terms };
}

function toHit(h: IndexedHit): RetrievalHit {
  return { page: h.page, score: Math.round(h.score * 10_000) / 10_000, snippet: snippetOf(h.page, h.terms), terms: h.terms };
}
