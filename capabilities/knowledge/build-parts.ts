import { setImmediate } from 'node:timers/promises';
import type { mongo } from 'mongoose';

type Collection<T extends mongo.Document> = mongo.Collection<T>;
import type { PageDoc } from './store';
import type { MongoConn } from '../../platform/mongo';
import { resolvedIds, type LinkTarget } from './compiler/links';
import type { CompiledPage } from './compiler/types';
import { upsertRacing } from '../../platform/upsert';

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

export interface MetaRecord {
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

/** A build's link targets as its meta record keeps them (the compile thread expands them: linkTargetsOf). */
export interface RawTargets {
  build_id: string;
  document_id: string;
  filename: string;
  /** JSON of [page_id, title, aliases, anchor] per page, in page order. */
  targets: string;
}

/**
 * What links of a base resolve against, as read for a thread: the live builds' meta records unparsed,
 * and targets listed one by one (pages of builds without parts; a build's own pages while it compiles).
 */
export interface TargetSet {
  raw: RawTargets[];
  listed: LinkTarget[];
}

/** Every target of a set (run in the compile thread: a base's targets are parsed there, not on a worker's event loop). */
export function linkTargetsOf(set: TargetSet): LinkTarget[] {
  const out: LinkTarget[] = [];
  for (const r of set.raw) {
    (JSON.parse(r.targets) as TargetTuple[]).forEach(([page_id, title, aliases, anchor], ordinal) => {
      out.push({ page_id, document_id: r.document_id, filename: r.filename, title, aliases, anchor, ordinal });
    });
  }
  for (const t of set.listed) out.push(t);
  return out;
}

/** The set without one document's targets (a build's own document: its new pages replace them). */
export function withoutDocument(set: TargetSet, documentId: string): TargetSet {
  return { raw: set.raw.filter((r) => r.document_id !== documentId), listed: set.listed.filter((t) => t.document_id !== documentId) };
}

/** What every page of one build shares. */
export interface BuildStamp {
  build_id: string;
  account_id: string;
  kb_id: string;
  document_id: string;
  filename: string;
  /** ISO time the build's pages carry as created_at. */
  created_at: string;
}

/** The stored page (`kb_pages` and the chunks) of a build's `ordinal`-th compiled page. */
export function pageDocOf(stamp: BuildStamp, p: CompiledPage, ordinal: number, outgoing: PageDoc['outgoing_links']): PageDoc {
  return {
    _id: `${stamp.build_id}:${p.page_id}`, page_id: p.page_id, account_id: stamp.account_id, kb_id: stamp.kb_id, document_id: stamp.document_id,
    build_id: stamp.build_id, title: p.title, summary: p.summary, tags: p.tags, aliases: p.aliases, links: resolvedIds(outgoing), body: p.body,
    confidence: p.confidence, needs_review: p.needs_review, source: p.source, outgoing_links: outgoing, link_requests: p.link_requests,
    anchor: p.anchor, ordinal, created_at: new Date(stamp.created_at),
  };
}

/** A build's part records as written (serializeParts makes them; in the compile thread for a new build). */
export interface SerializedParts {
  chunks: Array<{ first: number; count: number; data: string; links: string[] }>;
  /** The meta record's `targets`. */
  targets: string;
}

/** A build's pages (in page order) cut into chunk records of about CHUNK_CHARS, and its meta record's targets. */
export function serializeParts(pages: PageDoc[]): SerializedParts {
  const chunks: SerializedParts['chunks'] = [];
  let group: PageDoc[] = [];
  let size = 0;
  let first = 0;
  const flush = () => {
    if (group.length === 0) return;
    const { data, links } = chunkOfPages('', group);
    chunks.push({ first, count: group.length, data, links });
    first += group.length;
    group = [];
    size = 0;
  };
  for (const p of pages) {
    const s = sizeOf(p);
    if (group.length && size + s > CHUNK_CHARS) flush();
    group.push(p);
    size += s;
  }
  flush();
  return { chunks, targets: JSON.stringify(pages.map((p): TargetTuple => [p.page_id, p.title, p.aliases, p.anchor ?? ''])) };
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

/**
 * Pages per chunk record are cut at about this many characters of page text (BSON records stop at 16 MB).
 * Small enough that encoding or decoding one record on an event loop stays a few milliseconds (at 2 MB
 * the record's UTF-8 write alone took 10-16 ms of a worker's loop), large enough that a base of 5,000
 * pages is a few tens of point reads.
 */
const CHUNK_CHARS = 500_000;
/** Meta records kept in this process (immutable once written), by build id. */
const META_CACHE = 256;

const metaId = (buildId: string) => `${buildId}:meta`;
const chunkId = (buildId: string, n: number) => `${buildId}:c${n}`;
/** A small record saying the build's pages were removed (so cleanups after it skip the build). */
const goneId = (buildId: string) => `${buildId}:gone`;

/** A page's size for chunking: its text fields. */
const sizeOf = (p: PageDoc) => p.body.length + p.summary.length + p.title.length + 300 + p.outgoing_links.length * 60;

/** A build whose parts are complete, and how many chunk records it has. */
export interface StoredBuild {
  build_id: string;
  chunks: number;
}

/**
 * The chunk records of these builds, each build's in page order, read by _id a few at a time (each is a
 * point read of up to a few MB); a build with a chunk gone (it stopped being live meanwhile) is `missing`
 * and read like one without parts. On the driver's collection alone: the compile thread reads a link
 * pass's chunks with its own client, so their text never comes to the worker's event loop.
 */
export async function readChunkRecords(coll: Collection<mongo.Document>, builds: StoredBuild[]): Promise<{ chunks: RawChunk[]; missing: string[] }> {
  const records = coll as unknown as Collection<ChunkRecord>;
  const ids = builds.flatMap((m) => Array.from({ length: m.chunks }, (_, n) => chunkId(m.build_id, n)));
  const read = new Map<string, ChunkRecord | null>();
  for (let i = 0; i < ids.length; i += 4) {
    const batch = ids.slice(i, i + 4);
    const got = await Promise.all(batch.map((id) => records.findOne({ _id: id })));
    batch.forEach((id, j) => read.set(id, got[j]));
  }
  const chunks: RawChunk[] = [];
  const missing: string[] = [];
  for (const m of builds) {
    const mine = Array.from({ length: m.chunks }, (_, n) => read.get(chunkId(m.build_id, n)) ?? null);
    if (mine.some((c) => c === null)) missing.push(m.build_id);
    else for (const c of mine as ChunkRecord[]) chunks.push({ id: c._id, build_id: m.build_id, first: c.first, count: c.count, data: c.data, links: c.links });
  }
  return { chunks, missing };
}

/**
 * Writes a build's part records as serializeParts made them: the chunks, then the meta record (last:
 * while it is missing the parts are incomplete). Idempotent (a retried compile writes the same records).
 * On the driver's collection alone: the compile thread writes a new build's parts with its own client.
 */
export async function writePartRecords(
  coll: Collection<mongo.Document>, stamp: Omit<BuildStamp, 'created_at'>, parts: SerializedParts, pages: number,
): Promise<MetaRecord> {
  const chunks = coll as unknown as Collection<ChunkRecord>;
  const metas = coll as unknown as Collection<MetaRecord>;
  // One at a time: each is a point write of up to a few hundred KB, and the store's write lock is shared with everyone.
  for (let n = 0; n < parts.chunks.length; n++) {
    const { first, count, data, links } = parts.chunks[n];
    await upsertRacing(() => chunks.replaceOne({ _id: chunkId(stamp.build_id, n) }, { build_id: stamp.build_id, first, count, data, links }, { upsert: true }));
  }
  const meta: MetaRecord = {
    _id: metaId(stamp.build_id), build_id: stamp.build_id, account_id: stamp.account_id, kb_id: stamp.kb_id, document_id: stamp.document_id,
    filename: stamp.filename, chunks: parts.chunks.length, pages, targets: parts.targets,
  };
  const { _id, ...body } = meta;
  await upsertRacing(() => metas.replaceOne({ _id }, body, { upsert: true }));
  return meta;
}

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
    const p = pages[0];
    const stamp = { build_id: p.build_id, account_id: p.account_id, kb_id: p.kb_id, document_id: p.document_id, filename: p.source.filename, created_at: '' };
    await this.writeSerialized(stamp, serializeParts(pages), pages.length);
  }

  /** Write a build's parts as serializeParts made them. */
  async writeSerialized(stamp: Omit<BuildStamp, 'created_at'>, parts: SerializedParts, pages: number): Promise<void> {
    this.remember(await writePartRecords(this.db.conn.collection(PARTS_COLLECTION), stamp, parts, pages));
  }

  /** A build's meta record written elsewhere (the compile thread writes a new build's parts): cached as if written here. */
  written(meta: MetaRecord): void {
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

  /** Link targets of these builds (by build id) as their meta records keep them; builds without parts are left out (`missing`). */
  async rawTargets(buildIds: string[]): Promise<{ raw: RawTargets[]; missing: string[] }> {
    const metas = await Promise.all(buildIds.map((b) => this.metaOf(b)));
    const raw: RawTargets[] = [];
    const missing: string[] = [];
    metas.forEach((m, i) => {
      if (m) raw.push({ build_id: m.build_id, document_id: m.document_id, filename: m.filename, targets: m.targets });
      else missing.push(buildIds[i]);
    });
    return { raw, missing };
  }

  /** These builds' chunk counts, as their meta records keep them; builds without complete parts are left out (`missing`). */
  async storedBuilds(buildIds: string[]): Promise<{ stored: StoredBuild[]; missing: string[] }> {
    const metas = await Promise.all(buildIds.map((b) => this.metaOf(b)));
    return {
      stored: metas.filter((m): m is MetaRecord => m !== null).map((m) => ({ build_id: m.build_id, chunks: m.chunks })),
      missing: buildIds.filter((_, i) => !metas[i]),
    };
  }

  /**
   * The chunk records of these builds as stored (JSON strings: a link pass hands them to a compile thread
   * unparsed), each build's in page order; builds without complete parts are left out (`missing`).
   */
  async rawChunks(buildIds: string[]): Promise<{ chunks: RawChunk[]; missing: string[] }> {
    const { stored, missing } = await this.storedBuilds(buildIds);
    const read = await readChunkRecords(this.db.conn.collection(PARTS_COLLECTION), stored);
    return { chunks: read.chunks, missing: [...missing, ...read.missing] };
  }

  /** The pages of these builds, each build's in page order; builds without complete parts are left out (`missing`). */
  async pages(buildIds: string[]): Promise<{ pages: PageDoc[]; missing: string[] }> {
    const { chunks, missing } = await this.rawChunks(buildIds);
    const pages: PageDoc[] = [];
    // One chunk's parse at a time, the event loop free between them (a gateway serves requests meanwhile).
    for (const c of chunks) {
      for (const p of pagesOfChunk(c)) pages.push(p);
      await setImmediate();
    }
    return { pages, missing };
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
    await upsertRacing(() => this.meta.updateOne({ _id: goneId(buildId) }, { $set: { build_id: buildId } }, { upsert: true }));
  }

  /** The page ids of a build as its meta record lists them (null without one). */
  async pageIds(buildId: string): Promise<string[] | null> {
    const meta = await this.metaOf(buildId);
    return meta ? (JSON.parse(meta.targets) as TargetTuple[]).map((t) => t[0]) : null;
  }
}
