import { type KnowledgeModels, type KbDoc, type KbDocumentDoc, type PageDoc, knowledgeRedisKeys } from './store';
import { type RedisClient } from '../../platform/redis';
import type { MongoConn } from '../../platform/mongo';
import { DEFAULT_KB_ID, type Page } from '../../domain/knowledge/page';
import { BuildParts, type TargetSet } from './build-parts';

/** A base as `{account_id, kb_id}`; `kb_id` is `default` for the personal base. */
export interface BaseRef {
  account_id: string;
  kb_id: string;
}

export const baseKey = (b: BaseRef) => `${b.account_id}/${b.kb_id}`;

/**
 * The reader's view of stored pages. A page is visible only while its build is
 * its document's live build (`KbDocumentDoc.live_build_id`) and the document
 * is not deleted: a build writes every page first and then flips that one
 * pointer, so readers never see half a build. Every change that readers can
 * see bumps the base's version in Redis, which search indexes key on, so a
 * rebuild on one gateway instance is seen by the next search on any other.
 */
export class PageStore {
  /** Each build's pages in a few records read by `_id` (capabilities/knowledge/build-parts.ts): no scan of `kb_pages`. */
  readonly parts: BuildParts;

  constructor(private readonly db: KnowledgeModels & MongoConn, private readonly redis: RedisClient) {
    this.parts = new BuildParts(db);
  }

  /** The base record; the personal base `default` exists for every account even before its first upload. */
  async base(ref: BaseRef): Promise<KbDoc | null> {
    const doc = await this.db.Kb.findById(baseKey(ref)).lean<KbDoc>();
    if (doc) return doc.deleted_at ? null : doc;
    if (ref.kb_id !== DEFAULT_KB_ID) return null;
    return {
      _id: baseKey(ref), account_id: ref.account_id, kb_id: DEFAULT_KB_ID, name: 'Personal', kind: 'personal',
      readers: 'all', compiler: 'rules', compiler_model: null, deleted_at: null, created_at: new Date(0),
    };
  }

  /** Build ids whose pages are visible in this base, by document id. */
  async liveBuilds(ref: BaseRef): Promise<Map<string, string>> {
    const docs = await this.db.KbDocument.find({ account_id: ref.account_id, kb_id: ref.kb_id, deleted_at: null, live_build_id: { $ne: null } })
      .select({ _id: 1, live_build_id: 1 })
      .lean<Pick<KbDocumentDoc, '_id' | 'live_build_id'>[]>();
    return new Map(docs.map((d) => [d._id, d.live_build_id!]));
  }

  /** Every visible page of a base (each live build's pages in page order, builds in document id order). */
  async livePages(ref: BaseRef): Promise<PageDoc[]> {
    const live = await this.liveBuilds(ref);
    if (live.size === 0) return [];
    const builds = [...new Set(live.values())];
    const { pages, missing } = await this.parts.pages(builds);
    if (missing.length === 0) return pages;
    // Builds without parts (written before them, or seeded directly): a query of kb_pages, which scans it.
    const rest = await this.db.Page.find({ account_id: ref.account_id, kb_id: ref.kb_id, build_id: { $in: missing } }).lean<PageDoc[]>();
    return [...pages, ...rest.filter((p) => live.get(p.document_id) === p.build_id)];
  }

  /**
   * What links resolve against, for every visible page of a base: ids, titles, aliases, anchors (no bodies),
   * as the live builds' meta records keep them (parsed by the compile thread: capabilities/knowledge/build-parts.ts).
   */
  async liveTargets(ref: BaseRef, live?: Map<string, string>): Promise<TargetSet> {
    live ??= await this.liveBuilds(ref);
    if (live.size === 0) return { raw: [], listed: [] };
    const { raw, missing } = await this.parts.rawTargets([...new Set(live.values())]);
    if (missing.length === 0) return { raw, listed: [] };
    const rest = await this.db.Page.find({ account_id: ref.account_id, kb_id: ref.kb_id, build_id: { $in: missing } })
      .select({ page_id: 1, document_id: 1, build_id: 1, source: 1, title: 1, aliases: 1, anchor: 1, ordinal: 1 })
      .lean<Pick<PageDoc, 'page_id' | 'document_id' | 'build_id' | 'source' | 'title' | 'aliases' | 'anchor' | 'ordinal'>[]>();
    const listed = rest.filter((p) => live!.get(p.document_id) === p.build_id).map((p) => ({
      page_id: p.page_id, document_id: p.document_id, filename: p.source.filename, title: p.title, aliases: p.aliases, anchor: p.anchor ?? '', ordinal: p.ordinal ?? 0,
    }));
    return { raw, listed };
  }

  /** Visible pages with these public ids in one of the given bases (unknown or invisible ids are left out). */
  async livePagesById(pageIds: string[], bases: BaseRef[]): Promise<PageDoc[]> {
    if (pageIds.length === 0 || bases.length === 0) return [];
    const allowed = new Set(bases.map(baseKey));
    const candidates = await this.db.Page.find({ page_id: { $in: pageIds } }).lean<PageDoc[]>();
    const inScope = candidates.filter((p) => allowed.has(baseKey(p)));
    const docIds = [...new Set(inScope.map((p) => p.document_id))];
    const docs = await this.db.KbDocument.find({ _id: { $in: docIds }, deleted_at: null })
      .select({ _id: 1, live_build_id: 1 })
      .lean<Pick<KbDocumentDoc, '_id' | 'live_build_id'>[]>();
    const live = new Map(docs.map((d) => [d._id, d.live_build_id]));
    return inScope.filter((p) => live.get(p.document_id) === p.build_id);
  }

  async version(ref: BaseRef): Promise<number> {
    return Number((await this.redis.get(knowledgeRedisKeys.kbVersion(ref.account_id, ref.kb_id))) ?? 0);
  }

  /** Call after anything readers can see changed (a build went live, a document was removed). */
  async bumpVersion(ref: BaseRef): Promise<number> {
    return this.redis.incr(knowledgeRedisKeys.kbVersion(ref.account_id, ref.kb_id));
  }
}

/** The spec's page (3 section 2.3) from a stored one. */
export function toPage(doc: PageDoc): Page {
  return {
    id: doc.page_id,
    kb_id: doc.kb_id,
    title: doc.title,
    summary: doc.summary,
    tags: doc.tags,
    aliases: doc.aliases,
    links: doc.links,
    body: doc.body,
    confidence: doc.confidence,
    needs_review: doc.needs_review,
    source: doc.source,
    outgoing_links: doc.outgoing_links,
  };
}
