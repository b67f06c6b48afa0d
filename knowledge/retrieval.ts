import type { Page } from '../domain/knowledge/page';
import { baseKey, type BaseRef } from './page-store';
import type { Corpus, CorpusCache } from './corpus';
import { PageIndex, snippetOf, type IndexedHit } from './search-index';
import { tokenize } from './tokenize';

export interface RetrievalHit {
  page: Page;
  score: number;
  /** The best matching passage, with the query terms in it. */
  snippet: string;
  /** The query's index terms (knowledge/tokenize.ts) that this page contains. */
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
 * One base: its cached index (knowledge/corpus.ts). Several bases: one index
 * over their union, so BM25's document frequencies and lengths are those of
 * the whole searched collection and scores from different bases compare; the
 * union index is cached under the bases' versions like a single one.
 */
export class Retrieval {
  private readonly unions = new Map<string, PageIndex>();

  constructor(private readonly corpora: CorpusCache, private readonly maxUnions = 64) {}

  async search(bases: BaseRef[], q: string, opts: { limit: number; offset: number }): Promise<RetrievalResult> {
    const unique = [...new Map(bases.map((b) => [baseKey(b), b])).values()];
    const queryTerms = [...new Set(tokenize(q))];
    if (unique.length === 0 || queryTerms.length === 0) return { total: 0, queryTerms, hits: [] };
    const corpora = await this.corpora.getMany(unique);
    const offset = Math.max(0, Math.floor(opts.offset));
    const limit = Math.max(0, Math.floor(opts.limit));
    const found = this.indexOf(corpora).search(q, limit, offset);
    return { total: found.total, queryTerms, hits: found.hits.map(toHit) };
  }

  private indexOf(corpora: Corpus[]): PageIndex {
    if (corpora.length === 1) return corpora[0].searchIndex;
    const key = corpora.map((c) => `${baseKey(c.ref)}@${c.version}`).sort().join('|');
    let index = this.unions.get(key);
    if (index) {
      this.unions.delete(key);
    } else {
      index = new PageIndex(corpora.flatMap((c) => c.pages), corpora.map((c) => c.searchIndex));
      while (this.unions.size >= this.maxUnions) this.unions.delete(this.unions.keys().next().value!);
    }
    this.unions.set(key, index);
    return index;
  }
}

function toHit(h: IndexedHit): RetrievalHit {
  return { page: h.page, score: Math.round(h.score * 10_000) / 10_000, snippet: snippetOf(h.page, h.terms), terms: h.terms };
}
