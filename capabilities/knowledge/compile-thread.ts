import type { DocFormat } from './extract/formats';
import { extract, UnreadableDocument } from './extract';
import { compileRules } from './compiler/rules';
import { LinkIndex, resolveLinks, type LinkTarget } from './compiler/links';
import type { OutgoingLink } from '../../domain/knowledge/page';
import type { CompileInput, CompiledPage, CompileResult } from './compiler/types';

/**
 * The CPU-heavy steps of a build, run in a worker thread (capabilities/knowledge/compute.ts
 * runs them through a piscina pool, so the worker's event loop keeps serving
 * workflow tasks, heartbeats and metrics while a large document compiles).
 * Pure functions of their input: bytes and metadata in, pages out.
 */
export type ThreadTask =
  | { kind: 'compile'; format: DocFormat; data: Uint8Array; input: Omit<CompileInput, 'doc'> }
  | { kind: 'links'; baseKey: string; targets: LinkTarget[]; pages: Array<Pick<CompiledPage, 'page_id' | 'body' | 'link_requests'>> };

export type ThreadResult =
  | { kind: 'compiled'; result: CompileResult }
  | { kind: 'unreadable'; message: string }
  | { kind: 'links'; outgoing: OutgoingLink[][] };

export async function runTask(task: ThreadTask): Promise<ThreadResult> {
  if (task.kind === 'links') {
    const index = new LinkIndex(task.targets);
    return { kind: 'links', outgoing: task.pages.map((p) => resolveLinks(task.baseKey, p, index)) };
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
