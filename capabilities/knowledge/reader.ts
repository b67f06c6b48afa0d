import { errors } from '../../domain/errors';
import type { Page, PageSource, SearchHit, SearchResponse, SourceInfo } from '../../domain/knowledge/page';
import type { BaseRef, PageStore } from './page-store';
import type { Corpus, CorpusCache } from './corpus';
import type { KnowledgeScope } from './scope';
import type { Retrieval } from './retrieval';

/**
 * Every read rule of the knowledge base in one place (spec 3 sections 2, 4.1,
 * 4.2, 8): the REST endpoints, the MCP tools and the Dify endpoint are thin
 * renderings of these methods. A caller reads within a scope (`BaseRef[]`):
 * one base for REST (its `kb_id`), everything the key may read for MCP.
 * Unreadable and missing bases and pages raise the same 404.
 */

/** Spec 3 section 8. */
export const LIMITS = {
  restSearchDefault: 20,
  mcpSearchDefault: 10,
  searchMax: 50,
  batchIds: 25,
  restBatchBody: 4000,
  mcpBatchBody: 1200,
  mcpPageBody: 8000,
  tagPageDefault: 50,
  tagPageMax: 200,
} as const;

/** The light view of a page used by lists (tags, backlinks). */
export interface PageSummary {
  id: string;
  kb_id: string;
  title: string;
  summary: string;
  tags: string[];
  confidence: number;
  needs_review: boolean;
}

/** A search hit (spec 3 section 2.1) that also names its base. */
export type KbSearchHit = SearchHit & { kb_id: string };
export type KbSearchResponse = Omit<SearchResponse, 'results'> & { results: KbSearchHit[] };

export type TruncatedPage = Page & { body_truncated: boolean };

export interface KbView {
  kb_id: string;
  name: string;
  kind: 'personal' | 'team';
  page_count: number;
}

/** Signs a page's source into spec 3 section 2.4 (capabilities/knowledge/storage/source-links.ts). */
export interface SourceSigner {
  sourceInfo(source: PageSource, baseUrl: string): SourceInfo;
}

export class Paged<T> {
  constructor(readonly total: number, readonly offset: number, readonly items: T[]) {}
  get has_more(): boolean {
    return this.offset + this.items.length < this.total;
  }
}

/** The same answer for a base or page that does not exist and one the caller may not read. */

export class KnowledgeReader {
  constructor(
    private readonly scope: KnowledgeScope,
    private readonly store: PageStore,
    private readonly corpora: CorpusCache,
    private readonly retrieval: Retrieval,
    private readonly signer: SourceSigner,
  ) {}

  /** Everything a key of this account may read. */
  scopeOfAccount(accountId: string): Promise<BaseRef[]> {
    return this.scope.forAccount(accountId);
  }

  /** The one readable base named `kbId` (default: the personal base), or 404. */
  async base(accountId: string, kbId: string | undefined): Promise<BaseRef> {
    const scope = await this.scope.forAccount(accountId);
    const ref = await this.scope.resolve(scope, kbId || 'default');
    if (!ref) throw errors.notFound(`knowledge base '${kbId}' not found`);
    return ref;
  }

  /** The readable bases with their names and page counts (personal base first). */
  async bases(scope: BaseRef[]): Promise<KbView[]> {
    const [docs, corpora] = await Promise.all([Promise.all(scope.map((r) => this.store.base(r))), this.corpora.getMany(scope)]);
    const out: KbView[] = [];
    scope.forEach((ref, i) => {
      const doc = docs[i];
      if (!doc) return;
      out.push({ kb_id: ref.kb_id, name: doc.name, kind: doc.kind, page_count: corpora[i].pages.length });
    });
    return out;
  }

  /** Spec 3 section 2.2; each hit also names its base (`kb_id`), since a scope may hold several. */
  async search(scope: BaseRef[], q: string, limit: number, offset: number): Promise<KbSearchResponse> {
    const query = q.trim();
    if (!query) throw errors.invalidRequest('q: a non-empty query is required', 'q');
    const lim = Math.min(Math.max(1, limit), LIMITS.searchMax);
    const res = await this.retrieval.search(scope, query, { limit: lim, offset });
    const results: KbSearchHit[] = res.hits.map((h) => ({
      id: h.page.id,
      kb_id: h.page.kb_id,
      title: h.page.title,
      summary: h.page.summary,
      snippet: h.snippet,
      tags: h.page.tags,
      confidence: h.page.confidence,
      needs_review: h.page.needs_review,
      score: h.score,
    }));
    return { query, total_hits: res.total, offset, returned: results.length, has_more: offset + results.length < res.total, results };
  }

  /** Tags of the scope with the number of pages carrying each, most used first. */
  async tags(scope: BaseRef[]): Promise<Array<{ tag: string; count: number }>> {
    const counts = new Map<string, number>();
    for (const c of await this.corpora.getMany(scope)) for (const [t, n] of c.tags) counts.set(t, (counts.get(t) ?? 0) + n);
    return [...counts].map(([tag, count]) => ({ tag, count })).sort((a, b) => b.count - a.count || cmp(a.tag, b.tag));
  }

  /** Pages carrying `tag` (exact, or the same ignoring case), by title. */
  async pagesByTag(scope: BaseRef[], tag: string, limit: number = LIMITS.tagPageDefault, offset = 0): Promise<Paged<PageSummary>> {
    const want = tag.trim().toLowerCase();
    const pages = (await this.corpora.getMany(scope))
      .flatMap((c) => c.pages.filter((p) => p.tags.some((t) => t.toLowerCase() === want)))
      .sort((a, b) => cmp(a.title, b.title) || cmp(a.id, b.id));
    const lim = Math.min(Math.max(1, limit), LIMITS.tagPageMax);
    return new Paged(pages.length, offset, pages.slice(offset, offset + lim).map(summaryOf));
  }

  /** One page, its body cut to `maxBody` characters when given; 404 when no base of the scope has it. */
  async page(scope: BaseRef[], id: string, maxBody?: number): Promise<TruncatedPage> {
    const found = await this.find(scope, id);
    if (!found) throw errors.notFound(`page '${id}' not found`);
    return truncate(found.page, maxBody);
  }

  /**
   * Several pages in the order asked: the first 25 distinct ids are read,
   * the rest dropped; ids that no base of the scope has are listed in
   * `missing`. An empty list is a 400.
   */
  async pages(scope: BaseRef[], ids: string[], maxBody: number): Promise<{ pages: TruncatedPage[]; missing: string[] }> {
    const wanted = [...new Set(ids.map((s) => s.trim()).filter(Boolean))].slice(0, LIMITS.batchIds);
    if (wanted.length === 0) throw errors.invalidRequest('ids: give at least one page id (comma-separated, at most 25)', 'ids');
    const corpora = await this.corpora.getMany(scope);
    const pages: TruncatedPage[] = [];
    const missing: string[] = [];
    for (const id of wanted) {
      const page = lookup(corpora, id);
      if (page) pages.push(truncate(page, maxBody));
      else missing.push(id);
    }
    return { pages, missing };
  }

  /** Pages of the scope whose links point at page `id` (404 when the page itself is not readable). */
  async backlinks(scope: BaseRef[], id: string): Promise<PageSummary[]> {
    const corpora = await this.corpora.getMany(scope);
    if (!lookup(corpora, id)) throw errors.notFound(`page '${id}' not found`);
    const seen = new Set<string>();
    const out: PageSummary[] = [];
    for (const c of corpora) {
      for (const p of c.backlinks.get(id) ?? []) {
        if (seen.has(p.id)) continue;
        seen.add(p.id);
        out.push(summaryOf(p));
      }
    }
    return out.sort((a, b) => cmp(a.title, b.title) || cmp(a.id, b.id));
  }

  /** The page's source document with a fresh 1-hour link. */
  async source(scope: BaseRef[], id: string, baseUrl: string): Promise<SourceInfo> {
    const found = await this.find(scope, id);
    if (!found) throw errors.notFound(`page '${id}' not found`);
    return this.signer.sourceInfo(found.page.source, baseUrl);
  }

  private async find(scope: BaseRef[], id: string): Promise<{ page: Page; corpus: Corpus } | null> {
    for (const corpus of await this.corpora.getMany(scope)) {
      const page = corpus.byId.get(id);
      if (page) return { page, corpus };
    }
    return null;
  }
}

function lookup(corpora: Corpus[], id: string): Page | undefined {
  for (const c of corpora) {
    const p = c.byId.get(id);
    if (p) return p;
  }
  return undefined;
}

export function summaryOf(p: Page): PageSummary {
  return { id: p.id, kb_id: p.kb_id, title: p.title, summary: p.summary, tags: p.tags, confidence: p.confidence, needs_review: p.needs_review };
}

function truncate(page: Page, maxBody?: number): TruncatedPage {
  if (maxBody === undefined || page.body.length <= maxBody) return { ...page, body_truncated: false };
  // Never split a UTF-16 surrogate pair.
  let end = maxBody;
  const code = page.body.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { ...page, body: page.body.slice(0, end), body_truncated: true };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
