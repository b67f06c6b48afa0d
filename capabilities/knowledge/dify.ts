import { z } from 'zod';
import type { BaseRef } from './page-store';
import type { KnowledgeReader } from './reader';
import type { Retrieval, RetrievalHit } from './retrieval';

/**
 * Dify's External Knowledge API (also spoken by RAGFlow and others): Dify
 * POSTs `{knowledge_id, query, retrieval_setting: {top_k, score_threshold}}`
 * to `{endpoint}/retrieval` with `Authorization: Bearer {key}` and expects
 * `{records: [{content, score, title, metadata}]}`, scores in 0..1. Served
 * over the same retrieval as every other surface, within the key's scope.
 */

export const DIFY_MAX_TOP_K = 50;
/** Characters of a page's body given to Dify as the record's content (as the REST batch read). */
export const DIFY_CONTENT_CHARS = 4000;
/** `knowledge_id` that searches every base the key may read. */
export const ALL_BASES = '*';

export const DifyRequest = z.object({
  knowledge_id: z.string().trim().min(1).max(200),
  query: z.string().trim().min(1).max(4000),
  retrieval_setting: z.object({
    top_k: z.number().int().min(1).max(1000).transform((n) => Math.min(n, DIFY_MAX_TOP_K)),
    score_threshold: z.number().min(0).max(1).default(0),
  }).loose(),
  metadata_condition: z.unknown().optional(),
}).loose();
export type DifyRequest = z.infer<typeof DifyRequest>;

export interface DifyRecord {
  content: string;
  score: number;
  title: string;
  metadata: Record<string, unknown>;
}

/**
 * The 0..1 score Dify's threshold is compared with: half how close the page's
 * BM25 score is to the best hit's, half the share of the query's terms the
 * page contains. The best hit containing every query term scores 1; a page
 * matching one term of three, far below the best, scores little.
 */
export function normalisedScore(hit: Pick<RetrievalHit, 'score' | 'terms'>, topScore: number, queryTerms: number): number {
  const relative = topScore > 0 ? Math.min(1, hit.score / topScore) : 0;
  const coverage = queryTerms > 0 ? Math.min(1, new Set(hit.terms).size / queryTerms) : 0;
  return Math.round((0.5 * relative + 0.5 * coverage) * 10_000) / 10_000;
}

export class DifyRetrieval {
  constructor(private readonly reader: KnowledgeReader, private readonly retrieval: Retrieval) {}

  /** Records for a request by a key of this account; the base must be readable (else the reader's 404). */
  async retrieve(accountId: string, req: DifyRequest): Promise<{ records: DifyRecord[] }> {
    const scope: BaseRef[] = req.knowledge_id === ALL_BASES
      ? await this.reader.scopeOfAccount(accountId)
      : [await this.reader.base(accountId, req.knowledge_id)];
    const res = await this.retrieval.search(scope, req.query, { limit: req.retrieval_setting.top_k, offset: 0 });
    const top = res.hits[0]?.score ?? 0;
    const records: DifyRecord[] = [];
    for (const hit of res.hits) {
      const score = normalisedScore(hit, top, res.queryTerms.length);
      if (score < req.retrieval_setting.score_threshold) continue;
      const p = hit.page;
      const body = p.body.length > DIFY_CONTENT_CHARS ? `${p.body.slice(0, DIFY_CONTENT_CHARS)}…` : p.body;
      records.push({
        content: p.summary ? `${p.summary}\n\n${body}` : body,
        score,
        title: p.title,
        metadata: {
          page_id: p.id, kb_id: p.kb_id, tags: p.tags, snippet: hit.snippet, bm25_score: hit.score,
          filename: p.source.filename, locator: p.source.locator, body_truncated: p.body.length > DIFY_CONTENT_CHARS,
        },
      });
    }
    records.sort((a, b) => b.score - a.score);
    return { records };
  }
}
