import type { mongo } from 'mongoose';

type Collection<T extends mongo.Document> = mongo.Collection<T>;
import type { PageDoc } from './store';
import type { MongoConn } from '../../platform/mongo';
import { resolvedIds } from './compiler/links';

/**
 * A build's pages in a few large records read by `_id` alone (`kb_build_parts`):
 *
 * - `{build}:meta`: what links resolve against for every page of the build
 *   (ids, titles, aliases, anchors; no bodies) and how many chunks it has;
 * - `{build}:c{n}`: the build's pages, in order, a few MB of them per record.
 *
 * Why: the store the project runs on (FerretDB 1.x over SQLite) pushes down to
 * an index only a filter of `_id` equality; every other query of `kb_pages`
 * (by build, by base, `_id: {$in}`, `_id` ranges) reads and decodes the whole
 * collection, every page of every account (checked with `explain`:
 * `filterPushdown: false`, `SCAN`). A build step or a gateway's load of a base
 * that read the pages of a few builds thereby cost a scan of everything, and
 * a build of ten documents cost tens of such scans. Through these records the
 * link targets of a base cost one read per live build, its pages a few.
 *
 * `kb_pages` keeps one record per page (what per-page lookups and the tests
 * read); the chunks are the same pages, written with them by the compile
 * step and kept equal by link passes (the page first, then its chunk, so a
 * pass retried after a crash finds the chunk stale and writes both again).
 * The meta record is written last: while it is missing the build's parts are
 * incomplete, and readers fall back to `kb_pages` (so do builds written
 * before these records existed).
 */
export const PARTS_COLLECTION = 'kb_build_parts';

/** Link-target fields of a page, as kept in a build's meta record. */
export type TargetFields = Pick<PageDoc, 'page_id' | 'document_id' | 'build_id' | 'source' | 'title' | 'aliases' | 'anchor' | 'ordinal'>;

interface MetaRecord {
  _id: string;
  build_id: string;
  account_id: string;
  kb_id: string;
  document_id: string;
  filename: string;
  chunks: number;
  pages: number;
  /** JSON of [page_id, title, aliases, anchor] per page, in page order (ordinal = index). */
  targets: string;
}

type TargetTuple = [page_id: string, title: string, aliases: string[], anchor: string];

interface ChunkRecord {
  _id: string;
  build_id: string;
  /** The index of this chunk's first page in the build. */
  first: number;
  count: number;
  /** JSON of the pages without their links (a few long strings: FerretDB stores and reads those many times faster than nested records). */
  data: string;
  /** JSON of each page's outgoing links (link passes rewrite single entries). */
  links: string[];
}

/** A chunk record as a link pass handles it (capabilities/knowledge/compile-thread.ts parses it). */
export interface RawChunk {
  id: string;
  build_id: string;
  first: number;
  count: number;
  data: string;
  links: string[];
}

/** A chunk's pages. */
export function pagesOfChunk(c: Pick<RawChunk, 'data' | 'links'>): PageDoc[] {
  const data = JSON.parse(c.data) as Array<Omit<PageDoc, 'outgoing_links' | 'links'>>;
  return data.map((p, i) => {
    const outgoing = JSON.parse(c.links[i]) as PageDoc['outgoing_links'];
    return { ...p, created_at: new Date(p.created_at), outgoing_links: outgoing, links: resolvedIds(outgoing) };
  });
}

/** Pages as a chunk (for builds without parts: a link pass handles every page the same way). */
export function chunkOfPages(buildId: string, pages: PageDoc[]): RawChunk {
  return {
    id: '', build_id: buildId, first: 0, count: pages.length,
    data: JSON.stringify(pages.map(({ outgoing_links: _o, links: _l, ...rest }) => rest)),
    links: pages.map((p) => JSON.stringify(p.outgoing_links)),
  };
}

/** Pages per chunk record are cut at about this many characters of page text (BSON records stop at 16 MB). */
const CHUNK_CHARS = 2_000_000;
/** Meta records kept in this process (immutable once written), by build id. */
const META_CACHE = 256;

const metaId = (buildId: string) => `${buildId}:meta`;
const chunkId = (buildId: string, n: number) => `${buildId}:c${n}`;
/** A small record saying the build's pages were removed (so cleanups after it skip the build). */
const goneId = (buildId: string) => `${buildId}:gone`;

/** A page's size for chunking: its text fields. */
const sizeOf = (p: PageDoc) => p.body.length + p.summary.length + p.title.length + 300 + p.outgoing_links.length * 60;

export class BuildParts {
  private readonly metas = new Map<string, MetaRecord>();

  constructor(private readonly db: MongoConn) {}

  private get meta(): Collection<MetaRecord> {
    return this.db.conn.collection(PARTS_COLLECTION) as unknown as Collection<MetaRecord>;
  }

  private get chunks(): Collection<ChunkRecord> {
    return this.db.conn.collection(PARTS_COLLECTION) as unknown as Collection<ChunkRecord>;
  }

  /** Write a build's parts (idempotent: a retried compile writes the same records again). `pages` in page order. */
  async write(pages: PageDoc[]): Promise<void> {
    if (pages.length === 0) return;
    const first = pages[0];
    const groups: PageDoc[][] = [];
    let size = Infinity;
    for (const p of pages) {
      const s = sizeOf(p);
      if (size + s > CHUNK_CHARS) {
        groups.push([]);
        size = 0;
      }
      groups[groups.length - 1].push(p);
      size += s;
    }
    let at = 0;
    // One at a time: each is up to a few MB, and the store's write lock is shared with everyone.
    for (let n = 0; n < groups.length; n++) {
      const { data, links } = chunkOfPages(first.build_id, groups[n]);
      await this.chunks.replaceOne({ _id: chunkId(first.build_id, n) }, { build_id: first.build_id, first: at, count: groups[n].length, data, links }, { upsert: true });
      at += groups[n].length;
    }
    const meta: MetaRecord = {
      _id: metaId(first.build_id), build_id: first.build_id, account_id: first.account_id, kb_id: first.kb_id, document_id: first.document_id,
      filename: first.source.filename, chunks: groups.length, pages: pages.length,
      targets: JSON.stringify(pages.map((p): TargetTuple => [p.page_id, p.title, p.aliases, p.anchor ?? ''])),
    };
    const { _id, ...body } = meta;
    await this.meta.replaceOne({ _id }, body, { upsert: true });
    this.remember(meta);
  }

  /** The build's meta record, or null while its parts are incomplete (or for a build written before them). */
  private async metaOf(buildId: string): Promise<MetaRecord | null> {
    const hit = this.metas.get(buildId);
    if (hit) return hit;
    const meta = await this.meta.findOne({ _id: metaId(buildId) });
    if (meta) this.remember(meta);
    return meta;
  }

  private remember(meta: MetaRecord): void {
    this.metas.delete(meta.build_id);
    this.metas.set(meta.build_id, meta);
    while (this.metas.size > META_CACHE) this.metas.delete(this.metas.keys().next().value!);
  }

  /** Link targets of these builds (by build id); builds without parts are left out (`missing`). */
  async targets(buildIds: string[]): Promise<{ targets: TargetFields[]; missing: string[] }> {
    const metas = await Promise.all(buildIds.map((b) => this.metaOf(b)));
    const targets: TargetFields[] = [];
    const missing: string[] = [];
    metas.forEach((m, i) => {
      if (!m) {
        missing.push(buildIds[i]);
        return;
      }
      (JSON.parse(m.targets) as TargetTuple[]).forEach(([page_id, title, aliases, anchor], ordinal) => targets.push({
        page_id, document_id: m.document_id, build_id: m.build_id, title, aliases, anchor, ordinal,
        source: { filename: m.filename } as PageDoc['source'],
      }));
    });
    return { targets, missing };
  }

  /**
   * The chunk records of these builds as stored (JSON strings: a link pass hands them to a compile thread
   * unparsed), each build's in page order; builds without complete parts are left out (`missing`).
   */
  async rawChunks(buildIds: string[]): Promise<{ chunks: RawChunk[]; missing: string[] }> {
    const metas = await Promise.all(buildIds.map((b) => this.metaOf(b)));
    const missing = buildIds.filter((_, i) => !metas[i]);
    const present = metas.filter((m): m is MetaRecord => m !== null);
    const ids = present.flatMap((m) => Array.from({ length: m.chunks }, (_, n) => chunkId(m.build_id, n)));
    const read = new Map<string, ChunkRecord | null>();
    // A few reads at once: each is a point read of up to a few MB.
    for (let i = 0; i < ids.length; i += 4) {
      const batch = ids.slice(i, i + 4);
      const got = await Promise.all(batch.map((id) => this.chunks.findOne({ _id: id })));
      batch.forEach((id, j) => read.set(id, got[j]));
    }
    const chunks: RawChunk[] = [];
    for (const m of present) {
      const mine = Array.from({ length: m.chunks }, (_, n) => read.get(chunkId(m.build_id, n)) ?? null);
      // A chunk removed under us (the build stopped being live meanwhile): the build is read like one without parts.
      if (mine.some((c) => c === null)) missing.push(m.build_id);
      else for (const c of mine as ChunkRecord[]) chunks.push({ id: c._id, build_id: m.build_id, first: c.first, count: c.count, data: c.data, links: c.links });
    }
    return { chunks, missing };
  }

  /** The pages of these builds, each build's in page order; builds without complete parts are left out (`missing`). */
  async pages(buildIds: string[]): Promise<{ pages: PageDoc[]; missing: string[] }> {
    const { chunks, missing } = await this.rawChunks(buildIds);
    return { pages: chunks.flatMap(pagesOfChunk), missing };
  }

  /**
   * Record new links of some pages of a build in its chunks (after the pages themselves were written).
   * `changes`: the page's index in the build and its new links.
   */
  async setLinks(layout: ReadonlyArray<Pick<RawChunk, 'id' | 'first' | 'count'>>, changes: Array<{ index: number; outgoing: PageDoc['outgoing_links'] }>): Promise<void> {
    const byChunk = new Map<string, Record<string, unknown>>();
    for (const c of changes) {
      const chunk = layout.find((l) => c.index >= l.first && c.index < l.first + l.count);
      if (!chunk) continue;
      const set = byChunk.get(chunk.id) ?? {};
      set[`links.${c.index - chunk.first}`] = JSON.stringify(c.outgoing);
      byChunk.set(chunk.id, set);
    }
    for (const [id, set] of byChunk) await this.chunks.updateOne({ _id: id }, { $set: set });
  }

  /** Whether `remove` ran to its end for this build (its pages are gone: nothing to scan for). */
  async removed(buildId: string): Promise<boolean> {
    return (await this.meta.findOne({ _id: goneId(buildId) }, { projection: { _id: 1 } })) !== null;
  }

  /** Remove a build's parts (each record by `_id`: any other filter scans the collection), then mark the build removed. */
  async remove(buildId: string): Promise<void> {
    const meta = await this.metaOf(buildId);
    this.metas.delete(buildId);
    await this.meta.deleteOne({ _id: metaId(buildId) });
    // A meta record lost before its chunks (or never written): chunks are probed until one is absent.
    const count = meta?.chunks ?? 0;
    for (let n = 0; ; n++) {
      const r = await this.chunks.deleteOne({ _id: chunkId(buildId, n) });
      if (n >= count && r.deletedCount === 0) break;
    }
    await this.meta.updateOne({ _id: goneId(buildId) }, { $set: { build_id: buildId } }, { upsert: true });
  }

  /** The page ids of a build as its meta record lists them (null without one). */
  async pageIds(buildId: string): Promise<string[] | null> {
    const meta = await this.metaOf(buildId);
    return meta ? (JSON.parse(meta.targets) as TargetTuple[]).map((t) => t[0]) : null;
  }
}
