import type { mongo } from 'mongoose';
import { failpoint } from '../../platform/failpoints';
import { BUILDS_COLLECTION, PAGES_COLLECTION } from './collections';
import type { OutgoingLink } from '../../domain/knowledge/page';
import type { CompiledPage } from './compiler/types';
import { pageDocOf, serializeParts, writePartRecords, PARTS_COLLECTION, type BuildStamp, type MetaRecord } from './build-parts';

type Collection = mongo.Collection<mongo.Document>;

/**
 * A new build's records: its pages in `kb_pages` (in batches, with the
 * build's progress after each) and its part records (build-parts.ts). The
 * compile thread runs this with its own driver client (compile-thread.ts,
 * thread-store.ts), so a build's pages are encoded for the store off the
 * worker's event loop and never cross to it: before, the pages came back
 * from the thread, were copied into page documents and encoded by the driver
 * there, megabytes of short-lived objects a document, and the collector's
 * pauses that followed were most of the loop's stalls during a build.
 */

/**
 * Pages are written in batches of this many (one store round trip each), with the build's progress after each.
 * At 250 pages the driver's encode of a batch took 15-20 ms, at 100 about 6 (on the worker's loop, where it ran before).
 */
export const PAGE_WRITE_BATCH = 100;

/** The collections a build's records go to (names: collections.ts, build-parts.ts). */
export interface BuildCollections {
  pages: Collection;
  builds: Collection;
  parts: Collection;
}

/** The collections on a database handle (a mongoose connection's `db`, or a driver client's). */
export function buildCollections(db: mongo.Db): BuildCollections {
  return { pages: db.collection(PAGES_COLLECTION), builds: db.collection(BUILDS_COLLECTION), parts: db.collection(PARTS_COLLECTION) };
}

/** What a build's write left: the pages written and the meta record of its parts. */
export interface BuildWritten {
  written: number;
  meta: MetaRecord;
}

/**
 * Writes a compiled build (idempotent by the build id): its page count
 * (`pages_total`), the pages a retried attempt left (their links were
 * resolved against an older base), then the pages in batches with
 * `pages_done` after each, then the parts.
 */
export async function writeBuild(c: BuildCollections, stamp: BuildStamp, pages: CompiledPage[], outgoing: OutgoingLink[][]): Promise<BuildWritten> {
  const buildId = stamp.build_id;
  await c.builds.updateOne({ _id: buildId as never }, { $set: { pages_total: pages.length, updated_at: new Date() } });
  // By _id first: any other filter scans kb_pages on the embedded store.
  if (await c.pages.findOne({ _id: `${buildId}:${pages[0].page_id}` as never }, { projection: { _id: 1 } })) {
    await c.pages.deleteMany({ document_id: stamp.document_id, build_id: buildId });
  }
  let written = 0;
  for (let i = 0; i < pages.length; i += PAGE_WRITE_BATCH) {
    const docs = pages.slice(i, i + PAGE_WRITE_BATCH).map((p, j) => pageDocOf(stamp, p, i + j, outgoing[i + j]));
    await c.pages.insertMany(docs as never[], { ordered: false });
    written += docs.length;
    if (i === 0) failpoint('kb.build.mid-pages');
    await c.builds.updateOne({ _id: buildId as never }, { $set: { pages_done: written, updated_at: new Date() } });
  }
  // The same pages in a few records read by _id (build-parts.ts): link passes and gateways read those, not kb_pages.
  const parts = serializeParts(pages.map((p, i) => pageDocOf(stamp, p, i, outgoing[i])));
  return { written, meta: await writePartRecords(c.parts, stamp, parts, written) };
}
