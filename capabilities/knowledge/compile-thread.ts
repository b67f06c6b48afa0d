import type { DocFormat } from './extract/formats';
import { extract, UnreadableDocument } from './extract';
import { compileRules } from './compiler/rules';
import { LinkIndex, resolveLinks, type LinkTarget } from './compiler/links';
import type { OutgoingLink } from '../../domain/knowledge/page';
import type { CompileInput, CompiledPage, CompileResult } from './compiler/types';
import { linkTargetsOf, readChunkRecords, type BuildStamp, type RawChunk, type StoredBuild, type TargetSet } from './build-parts';
import { writeBuild, type BuildWritten } from './build-writes';
import { threadStore } from './thread-store';
import { workerData } from 'node:worker_threads';
import { niceThisThread } from '../../platform/thread-priority';

// This thread yields the CPU to the worker's event loop on a busy machine (KB_COMPILE_THREAD_NICE, compute.ts).
niceThisThread(Number((workerData as { nice?: number } | null)?.nice ?? 0));

/**
 * The CPU-heavy steps of a build, run in a worker thread (capabilities/knowledge/compute.ts
 * runs them through a piscina pool, so the worker's event loop keeps serving
 * workflow tasks, heartbeats and metrics while a large document compiles).
 * Pure functions of their input: bytes and metadata in, pages out.
 */
/**
 * A new build's link step: resolve its pages' links against the base's other documents (`targets`) and
 * its own pages, then, given the store's URL, write the build (build-writes.ts) with the thread's own
 * client: its pages never cross to the worker's event loop. Without a store the links go back.
 */
export interface LinkStep {
  baseKey: string;
  targets: TargetSet;
  stamp: BuildStamp;
  store?: string;
}

export type ThreadTask =
  /** Extraction and the rules; with `then` (a compiler that refines nothing), the link step and the writes too. */
  | { kind: 'compile'; format: DocFormat; data: Uint8Array; input: Omit<CompileInput, 'doc'>; then?: LinkStep }
  /** The link step of pages compiled before (a refined compile: the model's fields were added on the worker's loop). */
  | ({ kind: 'links'; pages: CompiledPage[] } & LinkStep)
  /**
   * A link pass's batch: chunks of the base's pages, read here with the thread's own client (`stored`,
   * given `store`) or handed over as read (`chunks`: builds without parts, from kb_pages), parsed here, not
   * on the worker's event loop; `pass` names the pass (its targets are the same for every batch of it,
   * and the thread builds their index once).
   */
  | { kind: 'relink'; baseKey: string; pass: string; targets: TargetSet; store?: string; stored: StoredBuild[]; chunks: Array<Pick<RawChunk, 'build_id' | 'first' | 'data' | 'links'>> };

export type ThreadResult =
  | { kind: 'compiled'; result: CompileResult }
  | { kind: 'unreadable'; message: string }
  | { kind: 'links'; outgoing: OutgoingLink[][] }
  /** The build written by the thread: how many pages, the compile's warnings, what the write left. */
  | { kind: 'written'; pages: number; warnings: string[]; written: BuildWritten }
  /**
   * The pages of the batch whose links differ from those stored: their place in their build and their links;
   * `layout`: where the chunks read here sit in their builds; `missing`: `stored` builds with a chunk gone
   * (read again like builds without parts).
   */
  | { kind: 'relinked'; changed: Array<{ build_id: string; index: number; page_id: string; outgoing: OutgoingLink[] }>; pages: number; layout: Array<Pick<RawChunk, 'id' | 'build_id' | 'first' | 'count'>>; missing: string[] };

/** The link step: every page's outgoing links, and the build written when the step names a store. */
async function linkStep(step: LinkStep, pages: CompiledPage[], warnings: string[]): Promise<ThreadResult> {
  const { stamp } = step;
  const own = pages.map((p, i): LinkTarget => ({
    page_id: p.page_id, document_id: stamp.document_id, filename: stamp.filename, title: p.title, aliases: p.aliases, anchor: p.anchor, ordinal: i,
  }));
  const index = new LinkIndex(linkTargetsOf({ raw: step.targets.raw, listed: [...step.targets.listed, ...own] }));
  const outgoing = pages.map((p) => resolveLinks(step.baseKey, p, index));
  if (!step.store) return { kind: 'links', outgoing };
  return { kind: 'written', pages: pages.length, warnings, written: await writeBuild(await threadStore(step.store), stamp, pages, outgoing) };
}

/** The link index of the latest pass this thread served: a pass's batches share it instead of building it again. */
let passIndex: { pass: string; index: LinkIndex } | null = null;

export async function runTask(task: ThreadTask): Promise<ThreadResult> {
  if (task.kind === 'links') return linkStep(task, task.pages, []);
  if (task.kind === 'relink') {
    if (passIndex?.pass !== task.pass) passIndex = { pass: task.pass, index: new LinkIndex(linkTargetsOf(task.targets)) };
    const changed: Array<{ build_id: string; index: number; page_id: string; outgoing: OutgoingLink[] }> = [];
    let pages = 0;
    const read = task.stored.length && task.store ? await readChunkRecords((await threadStore(task.store)).parts, task.stored) : { chunks: [], missing: task.stored.map((b) => b.build_id) };
    const layout = read.chunks.map(({ id, build_id, first, count }) => ({ id, build_id, first, count }));
    for (const c of [...read.chunks, ...task.chunks]) {
      const data = JSON.parse(c.data) as Array<Pick<CompiledPage, 'page_id' | 'body'> & { link_requests?: CompiledPage['link_requests'] }>;
      pages += data.length;
      data.forEach((p, i) => {
        if (!p.link_requests) return;
        const outgoing = resolveLinks(task.baseKey, { page_id: p.page_id, body: p.body, link_requests: p.link_requests }, passIndex!.index);
        if (!sameLinks(outgoing, JSON.parse(c.links[i]) as OutgoingLink[])) changed.push({ build_id: c.build_id, index: c.first + i, page_id: p.page_id, outgoing });
      });
    }
    return { kind: 'relinked', changed, pages, layout, missing: read.missing };
  }
  let doc;
  try {
    doc = await extract(task.format, Buffer.from(task.data.buffer, task.data.byteOffset, task.data.byteLength));
  } catch (err) {
    // Errors cross the thread boundary as plain Errors: the refusal is told as a result.
    if (err instanceof UnreadableDocument) return { kind: 'unreadable', message: err.message };
    throw err;
  }
  const result = compileRules({ ...task.input, doc });
  // No pages: the build is refused on the worker's loop (nothing to link or write).
  if (!task.then?.store || result.pages.length === 0) return { kind: 'compiled', result };
  return linkStep(task.then, result.pages, result.warnings);
}

export default runTask;

function sameLinks(a: OutgoingLink[], b: OutgoingLink[] | undefined): boolean {
  if (!b || a.length !== b.length) return false;
  return a.every((l, i) => l.id === b[i].id && l.resolved === b[i].resolved && l.title === b[i].title);
}
