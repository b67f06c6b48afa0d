import { knowledgeRedisKeys, type KnowledgeModels, type KbBuildDoc, type KbDoc, type KbDocumentDoc, type PageDoc } from './store';
import type { RedisClient } from '../../platform/redis';
import type { Logger } from '../../platform/logger';
import { failpoint } from '../../platform/failpoints';
import type { BaseRef, PageStore } from './page-store';
import { baseKey } from './page-store';
import type { FileStore } from './storage/file-store';
import { withLock } from './lock';
import { resolvedIds } from './compiler/links';
import type { Compiler } from './compiler/types';
import { inlineCompute, type Compute } from './compute';
import { chunkOfPages, readChunkRecords, withoutDocument, PARTS_COLLECTION, type BuildStamp, type RawChunk, type StoredBuild, type TargetSet } from './build-parts';
import { randomUUID } from 'node:crypto';
import { buildCollections, writeBuild, PAGE_WRITE_BATCH } from './build-writes';
import type { LinkStep, ThreadResult } from './compile-thread';

/**
 * The steps of one build, run by the build workflow's activities. Each is
 * idempotent by the build id, so a worker killed anywhere and a replayed
 * activity change nothing:
 * 1. compileBuild: read the file, compile, resolve links against the base,
 *    write every page under `{build_id}:{page_id}` (an upsert; invisible to
 *    readers, since the build is not live).
 * 2. publishBuild: under the document's lock, flip `live_build_id` to this
 *    build when it is newer than the live one and the document was not
 *    deleted after it; then bump the base's version, re-resolve the links
 *    this document's change can affect (relinkAfter: both directions) and
 *    drop the pages and files of older builds.
 */
export interface BuildDeps {
  db: KnowledgeModels;
  redis: RedisClient;
  log: Logger;
  pages: PageStore;
  kbFiles: FileStore;
  /** Where extraction, compiling and link scans run (a worker-thread pool in the worker); inline when absent. */
  compute?: Compute;
  /** The store's URL, for the compile thread's own client (it writes a new build's records); absent, they are written here. */
  storeUrl?: string;
  /** Called with each step's wall milliseconds (dev/bench/ingest-profile.ts); absent in production. */
  timings?: (phase: string, ms: number) => void;
}

/** Runs one step of a build, reporting its wall time to `deps.timings` when that is set. */
async function step<T>(deps: BuildDeps, phase: string, run: () => Promise<T> | T): Promise<T> {
  if (!deps.timings) return run();
  const t0 = performance.now();
  try {
    return await run();
  } finally {
    deps.timings(phase, performance.now() - t0);
  }
}

/** A build that cannot succeed however often it is retried. */
export class BuildRefused extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'BuildRefused';
  }
}

const refOf = (b: { account_id: string; kb_id: string }): BaseRef => ({ account_id: b.account_id, kb_id: b.kb_id });

async function loadBuild(db: KnowledgeModels, buildId: string): Promise<KbBuildDoc> {
  const b = await db.KbBuild.findById(buildId).lean<KbBuildDoc>();
  if (!b) throw new BuildRefused('build_missing', `build ${buildId} does not exist`);
  return b;
}


export async function compileBuild(deps: BuildDeps, buildId: string, compilerFor: (b: KbBuildDoc) => Compiler): Promise<{ pages: number; done: boolean }> {
  const build = await loadBuild(deps.db, buildId);
  if (build.state === 'succeeded' || build.state === 'failed') return { pages: build.pages_made, done: true };
  const now = new Date();
  await deps.db.KbBuild.updateOne({ _id: buildId }, { $set: { state: 'running', started_at: build.started_at ?? now, pages_done: 0, pages_total: null, updated_at: now } });
  const ref = refOf(build);
  if (!(await deps.pages.base(ref))) throw new BuildRefused('kb_deleted', 'the knowledge base was deleted');
  const file = await step(deps, 'read file', () => deps.kbFiles.get(build.r2_key));
  if (!file) throw new BuildRefused('file_missing', `the uploaded file ${build.filename} is no longer stored`);
  const compute = deps.compute ?? inlineCompute();
  const input = {
    baseKey: baseKey(ref), documentId: build.document_id, filename: build.filename, r2Key: build.r2_key,
    compiledAt: (build.started_at ?? now).toISOString(),
  };
  // Links resolve against the base as readers will see it: other documents' live pages plus this build's (titles and names, no bodies).
  const targets = withoutDocument(await step(deps, 'read base link targets', () => deps.pages.liveTargets(ref)), build.document_id);
  const stamp: BuildStamp = {
    build_id: buildId, account_id: build.account_id, kb_id: build.kb_id, document_id: build.document_id, filename: build.filename, created_at: now.toISOString(),
  };
  const link: LinkStep = { baseKey: baseKey(ref), targets, stamp, ...(deps.storeUrl ? { store: deps.storeUrl } : {}) };
  const compiler = compilerFor(build);
  // Extraction and the rules (sectioning, summaries, tags) in a worker thread; the file's bytes are moved, not copied.
  // A compiler that refines nothing has the thread go on to the links and the writes (build-writes.ts): the pages never come back here.
  const data = new Uint8Array(file.data.byteLength);
  data.set(file.data);
  let out = await step(deps, 'extraction + compile (thread)', () => compute.run(
    { kind: 'compile', format: build.format, data, input, ...(compiler.refine ? {} : { then: link }) }, [data.buffer],
  ));
  if (out.kind === 'unreadable') throw new BuildRefused('unreadable_document', out.message);
  let warnings: string[] = out.kind === 'written' ? out.warnings : [];
  if (out.kind === 'compiled') {
    const rules = out.result;
    const compiled = compiler.refine ? await step(deps, 'model fields (llm)', () => compiler.refine!(input, rules)) : rules;
    if (compiled.pages.length === 0) throw new BuildRefused('no_text', `no text could be read from ${build.filename}`);
    warnings = compiled.warnings;
    out = await step(deps, 'links + writes (thread)', () => compute.run({ kind: 'links', ...link, pages: compiled.pages }));
    // No store to write with (a test's deps): the links come back and the pages are written from here.
    if (out.kind === 'links') {
      const outgoing = out.outgoing;
      out = { kind: 'written', pages: compiled.pages.length, warnings, written: await step(deps, 'writes', () => writeBuild(buildCollections(deps.db.Page.db.db!), stamp, compiled.pages, outgoing)) };
    }
  }
  if (out.kind !== 'written') throw new Error('the compile thread answered out of turn');
  const { written, meta } = out.written;
  deps.pages.parts.written(meta);
  await deps.db.KbBuild.updateOne({ _id: buildId }, { $set: { pages_made: written, warnings: warnings.slice(0, 50), updated_at: new Date() } });
  return { pages: written, done: false };
}

export async function publishBuild(deps: BuildDeps, buildId: string): Promise<{ state: 'succeeded' | 'failed' }> {
  const build = await loadBuild(deps.db, buildId);
  if (build.state === 'succeeded' || build.state === 'failed') return { state: build.state };
  const verdict = await withLock(deps.redis, `doc:${build.document_id}`, async () => {
    const doc = await deps.db.KbDocument.findById(build.document_id).lean<KbDocumentDoc>();
    if (!doc) return { code: 'document_missing', message: 'the document no longer exists' };
    if (doc.live_build_id === build._id && !doc.deleted_at) return null; // flipped before a crash
    if (build.seq <= doc.deleted_seq) return { code: 'document_deleted', message: 'the document was deleted while this build ran' };
    if (doc.live_seq > build.seq) return { code: 'superseded', message: `a newer upload of ${build.filename} went live first` };
    if (!(await deps.pages.base(refOf(build)))) return { code: 'kb_deleted', message: 'the knowledge base was deleted' };
    await deps.db.KbDocument.updateOne(
      { _id: doc._id },
      {
        $set: {
          live_build_id: build._id, live_seq: build.seq, deleted_at: null, filename: build.filename, content_type: build.content_type,
          content_hash: build.content_hash, r2_key: build.r2_key, size: build.size, updated_at: new Date(),
        },
      },
    );
    return null;
  });
  const ref = refOf(build);
  if (verdict === null) {
    await deps.pages.bumpVersion(ref);
    failpoint('kb.publish.after-flip');
    await step(deps, 'relink after publish', () => relinkAfter(deps, ref, build.document_id));
    await step(deps, 'cleanup', () => cleanupDocument(deps, build.document_id));
    // Final only once everything above is done: a retry after a crash redoes the idempotent steps.
    await deps.db.KbBuild.updateOne({ _id: buildId }, { $set: { state: 'succeeded', finished_at: new Date(), updated_at: new Date() } });
  } else {
    // Its pages go first: whoever sees the build failed sees none of them left (a retry after a crash redoes both).
    await cleanupDocument(deps, build.document_id, buildId);
    await deps.db.KbBuild.updateOne({ _id: buildId }, { $set: { state: 'failed', error: verdict, finished_at: new Date(), updated_at: new Date() } });
  }
  return { state: verdict ? 'failed' : 'succeeded' };
}

/**
 * The build ends failed with this reason (its pages never went live and are removed). Unless its pointer already
 * flipped: then its pages are what readers see, and the build ends succeeded with what did not finish as a warning.
 */
export async function failBuild(deps: BuildDeps, buildId: string, error: { code: string; message: string }): Promise<void> {
  const build = await deps.db.KbBuild.findById(buildId).lean<KbBuildDoc>();
  if (!build || build.state === 'succeeded' || build.state === 'failed') return;
  const doc = await deps.db.KbDocument.findById(build.document_id).select({ live_build_id: 1, deleted_at: 1 }).lean<KbDocumentDoc>();
  if (doc && doc.live_build_id === buildId && !doc.deleted_at) {
    // The publish ran out of time after its flip (a store that stopped answering for its whole window): failing a build
    // whose pages are live would contradict every reader. The older builds go as the publish would have dropped them.
    await cleanupDocument(deps, build.document_id);
    const warning = `the build went live, but its publish did not finish (${error.code}: ${error.message.slice(0, 300)}): ` +
      'links between its pages and the rest of the base may not all be re-resolved; uploading the document again does that';
    await deps.db.KbBuild.updateOne(
      { _id: buildId },
      { $set: { state: 'succeeded', finished_at: new Date(), updated_at: new Date(), warnings: [...(build.warnings ?? []).slice(0, 49), warning] } },
    );
    deps.log.warn('kb build live but its publish did not finish', { build: buildId, code: error.code });
    return;
  }
  await cleanupDocument(deps, build.document_id, buildId);
  await deps.db.KbBuild.updateOne({ _id: buildId }, { $set: { state: 'failed', error, finished_at: new Date(), updated_at: new Date() } });
}

/**
 * Pages and files of a document's builds that can never be seen again: every
 * finished build other than the live one (older, superseded, failed, or
 * deleted with the document). Builds still running are left alone, except
 * `ending`: a build about to be marked failed, cleaned before it is.
 */
export async function cleanupDocument(deps: BuildDeps, documentId: string, ending?: string): Promise<void> {
  const doc = await deps.db.KbDocument.findById(documentId).lean<KbDocumentDoc>();
  if (!doc) return;
  const builds = await deps.db.KbBuild.find({ document_id: documentId }).select({ _id: 1, seq: 1, state: 1, r2_key: 1 }).lean<KbBuildDoc[]>();
  const live = doc.deleted_at ? null : doc.live_build_id;
  const dead = builds.filter((b) => b._id !== live && (b.state === 'succeeded' || b.state === 'failed' || b._id === ending));
  for (const b of dead) await removeBuildPages(deps, documentId, b._id);
  const keep = new Set(builds.filter((b) => !dead.includes(b)).map((b) => b.r2_key));
  for (const key of new Set(dead.map((b) => b.r2_key))) if (!keep.has(key)) await deps.kbFiles.delete(key);
}

/** A build's pages and parts, each by _id when its parts list the pages (any other filter scans kb_pages). */
async function removeBuildPages(deps: BuildDeps, documentId: string, buildId: string): Promise<void> {
  if (await deps.pages.parts.removed(buildId)) return;
  const ids = await deps.pages.parts.pageIds(buildId);
  if (ids === null) {
    await deps.db.Page.deleteMany({ document_id: documentId, build_id: buildId });
  } else if (ids.length) {
    for (let i = 0; i < ids.length; i += PAGE_WRITE_BATCH) {
      await deps.db.Page.bulkWrite(ids.slice(i, i + PAGE_WRITE_BATCH).map((id) => ({ deleteOne: { filter: { _id: `${buildId}:${id}` } } })), { ordered: false });
    }
  }
  await deps.pages.parts.remove(buildId);
}

/**
 * After a document's pages changed (a build went live, or the document was
 * deleted), the links of the base are resolved again, so a link resolves
 * when its target arrives later and turns unresolved when the target goes.
 *
 * One pass re-resolves every visible page of the base against all of them
 * (exact, no guessing which pages a change can touch) and writes only the
 * pages whose links changed, in batches. The work is sized for real uploads:
 * the targets come from the live builds' meta records and the pages from
 * their chunk records (capabilities/knowledge/build-parts.ts: reads by _id, no
 * scan of kb_pages), read by a compile thread with its own store client
 * (capabilities/knowledge/compute.ts, thread-store.ts) one build at a time,
 * which parses, resolves and compares them, so this event loop never reads,
 * decodes or holds the base's pages; and passes coalesce: serialised per base, a
 * pass is skipped when another one already started after this document's
 * change was visible (`kbrelinked:` holds the base version the last pass
 * read), so ten documents published together cost one or two passes, not ten.
 * Returns the number of pages whose links changed.
 */
export async function relinkAfter(deps: BuildDeps, ref: BaseRef, _documentId: string): Promise<number> {
  const changedAt = await deps.pages.version(ref);
  return withLock(deps.redis, `relink:${baseKey(ref)}`, async () => {
    const doneKey = knowledgeRedisKeys.relinked(baseKey(ref));
    const done = await deps.redis.get(doneKey);
    if (Number(done ?? -1) >= changedAt) return 0;
    const passVersion = await deps.pages.version(ref);
    const live = await deps.pages.liveBuilds(ref);
    let changed = 0;
    if (live.size > 0) {
      // The pass's targets (meta records, no bodies) and the pages as stored chunks, parsed and resolved in the thread:
      // this event loop never holds the base's pages as objects.
      const builds = [...new Set(live.values())];
      const targets = await step(deps, 'relink: read targets', () => deps.pages.liveTargets(ref, live));
      const compute = deps.compute ?? inlineCompute();
      const pass = `${baseKey(ref)}@${passVersion}:${randomUUID()}`;
      for (let b = 0; b < builds.length; b += RELINK_BUILDS) {
        for (const r of await relinkBatch(deps, ref, live, { compute, pass, targets }, builds.slice(b, b + RELINK_BUILDS))) {
          const layout = r.layout;
          if (r.changed.length === 0) continue;
          await step(deps, 'relink: write changed pages', async () => {
            const byBuild = new Map<string, Array<{ index: number; outgoing: PageDoc['outgoing_links'] }>>();
            const writes = r.changed.map((c) => {
              const list = byBuild.get(c.build_id) ?? [];
              list.push({ index: c.index, outgoing: c.outgoing });
              byBuild.set(c.build_id, list);
              return { updateOne: { filter: { _id: `${c.build_id}:${c.page_id}` }, update: { $set: { outgoing_links: c.outgoing, links: resolvedIds(c.outgoing) } } } };
            });
            // The pages first, then their builds' parts: a pass retried after a crash finds the parts stale and writes both again.
            for (let w = 0; w < writes.length; w += PAGE_WRITE_BATCH) await deps.db.Page.bulkWrite(writes.slice(w, w + PAGE_WRITE_BATCH), { ordered: false });
            for (const [build, list] of byBuild) {
              const mine = layout.filter((c) => c.build_id === build && c.id);
              if (mine.length) await deps.pages.parts.setLinks(mine, list);
            }
            changed += writes.length;
          });
        }
      }
    }
    if (changed) await deps.pages.bumpVersion(ref);
    await deps.redis.set(doneKey, String(passVersion));
    return changed;
  }, { waitMs: 10 * 60_000 });
}

/**
 * Builds per thread task of a link pass (each task also carries every target of the base, as their meta
 * records' strings; the thread indexes them once per pass, and reads the builds' chunks itself).
 */
const RELINK_BUILDS = 1;

type Relinked = Extract<ThreadResult, { kind: 'relinked' }>;

/**
 * One batch of a link pass: the thread reads the builds' chunk records with its own client (their text
 * never comes to this event loop), or, with no store for it (a test's deps), they are read here; builds
 * without parts (or with a chunk gone) go as their pages from kb_pages, in a second task.
 */
async function relinkBatch(
  deps: BuildDeps, ref: BaseRef, live: Map<string, string>, pass: { compute: Compute; pass: string; targets: TargetSet }, builds: string[],
): Promise<Relinked[]> {
  const run = async (task: { store?: string; stored: StoredBuild[]; chunks: RawChunk[] }): Promise<Relinked> => {
    const r = await step(deps, 'relink: resolve (thread)', () => pass.compute.run({
      kind: 'relink', baseKey: baseKey(ref), pass: pass.pass, targets: pass.targets, ...task,
      chunks: task.chunks.map(({ build_id, first, data, links }) => ({ build_id, first, data, links })),
    }));
    if (r.kind !== 'relinked') throw new Error('the link thread answered out of turn');
    return r;
  };
  const { stored, missing } = await deps.pages.parts.storedBuilds(builds);
  const results: Relinked[] = [];
  if (stored.length) {
    if (deps.storeUrl) results.push(await run({ store: deps.storeUrl, stored, chunks: [] }));
    else {
      const read = await readChunkRecords(deps.db.Page.db.db!.collection(PARTS_COLLECTION), stored);
      // Where the chunks read here sit: the thread reports the layout of what it read itself.
      const r = await run({ stored: [], chunks: read.chunks });
      results.push({ ...r, layout: read.chunks.map(({ id, build_id, first, count }) => ({ id, build_id, first, count })), missing: read.missing });
    }
  }
  const fallback = [...missing, ...results.flatMap((r) => r.missing)];
  if (fallback.length) {
    const chunks = await step(deps, 'relink: read pages (kb_pages)', () => pagesAsChunks(deps, ref, live, fallback));
    if (chunks.length) results.push(await run({ stored: [], chunks }));
  }
  return results;
}

/** Builds without parts: their live pages from kb_pages, as chunks (a link pass handles every page the same way). */
async function pagesAsChunks(deps: BuildDeps, ref: BaseRef, live: Map<string, string>, builds: string[]): Promise<RawChunk[]> {
  const chunks: RawChunk[] = [];
  for (const build of builds) {
    const pages: PageDoc[] = [];
    // A cursor in batches: no one long decode on the event loop.
    for await (const p of deps.db.Page.find({ account_id: ref.account_id, kb_id: ref.kb_id, build_id: build }).lean<PageDoc>().cursor({ batchSize: PAGE_WRITE_BATCH })) {
      if (live.get(p.document_id) === p.build_id) pages.push(p);
    }
    if (pages.length) chunks.push(chunkOfPages(build, pages));
  }
  return chunks;
}

/**
 * A deleted team base goes away whole: every document is marked deleted
 * (under its lock, past its latest build, so a build still running can never
 * go live: its publish fails `kb_deleted` and cleans up after itself), and
 * every page and stored file of the base is removed. Idempotent: a re-run
 * after a crash finishes the job. Refuses a base that is not deleted.
 * Returns the pages and files removed.
 */
export async function sweepDeletedBase(deps: BuildDeps, ref: BaseRef): Promise<{ pages: number; files: number }> {
  const base = await deps.db.Kb.findById(baseKey(ref)).lean<KbDoc>();
  if (!base?.deleted_at) return { pages: 0, files: 0 };
  const docs = await deps.db.KbDocument.find({ account_id: ref.account_id, kb_id: ref.kb_id }).lean<KbDocumentDoc[]>();
  for (const doc of docs) {
    if (doc.deleted_at && doc.live_build_id === null) continue;
    await withLock(deps.redis, `doc:${doc._id}`, async () => {
      const latest = await deps.db.KbBuild.findOne({ document_id: doc._id }).sort({ seq: -1 }).select({ seq: 1 }).lean<KbBuildDoc>();
      await deps.db.KbDocument.updateOne(
        { _id: doc._id },
        { $set: { deleted_at: doc.deleted_at ?? new Date(), deleted_seq: Math.max(latest?.seq ?? 0, doc.deleted_seq), live_build_id: null, updated_at: new Date() } },
      );
    });
  }
  await deps.pages.bumpVersion(ref);
  const { deletedCount } = await deps.db.Page.deleteMany({ account_id: ref.account_id, kb_id: ref.kb_id });
  const builds = await deps.db.KbBuild.find({ account_id: ref.account_id, kb_id: ref.kb_id }).select({ r2_key: 1 }).lean<KbBuildDoc[]>();
  for (const b of builds) await deps.pages.parts.remove(b._id);
  const keys = new Set([...builds.map((b) => b.r2_key), ...docs.map((d) => d.r2_key)].filter(Boolean));
  for (const key of keys) await deps.kbFiles.delete(key);
  return { pages: deletedCount ?? 0, files: keys.size };
}
