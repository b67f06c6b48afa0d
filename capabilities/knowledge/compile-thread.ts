import type { DocFormat } from './extract/formats';
import { extract, UnreadableDocument } from './extract';
import { compileRules } from './compiler/rules';
import { LinkIndex, resolveLinks, type LinkTarget } from './compiler/links';
import type { OutgoingLink } from '../../domain/knowledge/page';
import type { CompileInput, CompiledPage, CompileResult } from './compiler/types';
import { decodeChunk, linkTargetsOf, pageDocOf, serializeParts, type BuildStamp, type EncodedChunk, type RawChunk, type SerializedParts, type TargetSet } from './build-parts';

/**
 * The CPU-heavy steps of a build, run in a worker thread (capabilities/knowledge/compute.ts
 * runs them through a piscina pool, so the worker's event loop keeps serving
 * workflow tasks, heartbeats and metrics while a large document compiles).
 * Pure functions of their input: bytes and metadata in, pages out.
 */
export type ThreadTask =
  | { kind: 'compile'; format: DocFormat; data: Uint8Array; input: Omit<CompileInput, 'doc'> }
  /**
   * A new build's links, resolved against the base's other documents (`targets`) and its own pages; the
   * thread also makes the build's part records (build-parts.ts serializeParts), so the worker's loop only
   * writes strings.
   */
  | { kind: 'links'; baseKey: string; targets: TargetSet; stamp: BuildStamp; pages: CompiledPage[] }
  /**
   * A link pass's batch: chunks of the base's pages as stored (capabilities/knowledge/build-parts.ts), parsed
   * here, not on the worker's event loop; `pass` names the pass (its targets are the same for every batch
   * of it, and the thread builds their index once).
   */
  | { kind: 'relink'; baseKey: string; pass: string; targets: TargetSet; encoded: EncodedChunk[]; chunks: Array<Pick<RawChunk, 'build_id' | 'first' | 'data' | 'links'>> };

export type ThreadResult =
  | { kind: 'compiled'; result: CompileResult }
  | { kind: 'unreadable'; message: string }
  | { kind: 'links'; outgoing: OutgoingLink[][]; parts: SerializedParts }
  /**
   * The pages of the batch whose links differ from those stored: their place in their build and their links;
   * `layout`: where the decoded (encoded) chunks sit in their builds.
   */
  | { kind: 'relinked'; changed: Array<{ build_id: string; index: number; page_id: string; outgoing: OutgoingLink[] }>; pages: number; layout: Array<Pick<RawChunk, 'id' | 'build_id' | 'first' | 'count'>> };

/** The link index of the latest pass this thread served: a pass's batches share it instead of building it again. */
let passIndex: { pass: string; index: LinkIndex } | null = null;

export async function runTask(task: ThreadTask): Promise<ThreadResult> {
  if (task.kind === 'links') {
    const { stamp, pages } = task;
    const own = pages.map((p, i): LinkTarget => ({
      page_id: p.page_id, document_id: stamp.document_id, filename: stamp.filename, title: p.title, aliases: p.aliases, anchor: p.anchor, ordinal: i,
    }));
    const index = new LinkIndex(linkTargetsOf({ raw: task.targets.raw, listed: [...task.targets.listed, ...own] }));
    const outgoing = pages.map((p) => resolveLinks(task.baseKey, p, index));
    return { kind: 'links', outgoing, parts: serializeParts(pages.map((p, i) => pageDocOf(stamp, p, i, outgoing[i]))) };
  }
  if (task.kind === 'relink') {
    if (passIndex?.pass !== task.pass) passIndex = { pass: task.pass, index: new LinkIndex(linkTargetsOf(task.targets)) };
    const changed: Array<{ build_id: string; index: number; page_id: string; outgoing: OutgoingLink[] }> = [];
    let pages = 0;
    const decoded = task.encoded.map(decodeChunk);
    const layout = decoded.map(({ id, build_id, first, count }) => ({ id, build_id, first, count }));
    for (const c of [...decoded, ...task.chunks]) {
      const data = JSON.parse(c.data) as Array<Pick<CompiledPage, 'page_id' | 'body'> & { link_requests?: CompiledPage['link_requests'] }>;
      pages += data.length;
      data.forEach((p, i) => {
        if (!p.link_requests) return;
        const outgoing = resolveLinks(task.baseKey, { page_id: p.page_id, body: p.body, link_requests: p.link_requests }, passIndex!.index);
        if (!sameLinks(outgoing, JSON.parse(c.links[i]) as OutgoingLink[])) changed.push({ build_id: c.build_id, index: c.first + i, page_id: p.page_id, outgoing });
      });
    }
    return { kind: 'relinked', changed, pages, layout };
  }
  let doc;
  try {
    doc = await extract(task.format, Buffer.from(task.data.buffer, task.data.byteOffset, task.data.byteLength));
  } catch (err) {
    // Errors cross the thread boundary as plain Errors: the refusal is told as a result.
    if (err instanceof UnreadableDocument) return { kind: 'unreadable', message: err.message };
    throw err;
  }
  return { kind: 'compiled', result: compileRules({ ...task.input, doc }) };
}

export default runTask;

function sameLinks(a: OutgoingLink[], b: OutgoingLink[] | undefined): boolean {
  if (!b || a.length !== b.length) return false;
  return a.every((l, i) => l.id === b[i].id && l.resolved === b[i].resolved && l.title === b[i].title);
}
