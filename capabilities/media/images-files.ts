import type { MediaModels } from './store';
import { deleteFiles, isFileRef, saveFile } from '../../providers/media/images-files';
import { errors } from '../../domain/errors';

/**
 * Reference images sent inline (`data:` URIs from JSON, or uploaded files)
 * are stored in `task_files` under the request id before the task is
 * written, so the task document stays far below MongoDB's 16 MB limit
 * whatever the 95 MB body held. The adapter loads them back
 * (providers/media/images-files.ts).
 */
const DATA_URI = /^data:([a-z]+\/[a-z0-9.+-]+);base64,/i;
/** Text the client wrote is never a file, even when it starts like one. */
const TEXT_FIELDS = new Set(['prompt', 'model', 'size', 'response_format']);

function decode(uri: string): { contentType: string; data: Buffer } {
  const m = DATA_URI.exec(uri)!;
  return { contentType: m[1], data: Buffer.from(uri.slice(m[0].length), 'base64') };
}

/**
 * The input with every top-level base64 `data:` value (or array item)
 * replaced by a `task-file:` reference, and the references written. On a
 * failure nothing stays behind.
 */
export async function storeInlineFiles(db: MediaModels, group: string, input: Record<string, unknown>): Promise<{ input: Record<string, unknown>; refs: string[] }> {
  const refs: string[] = [];
  const keep = async (field: string, v: unknown, i: number): Promise<unknown> => {
    // A reference is what this function writes; one the client wrote would name another submission's file.
    if (isFileRef(v)) throw errors.invalidRequest(`${field} must be a URL or a base64 data: URI`, field);
    if (typeof v !== 'string' || !DATA_URI.test(v)) return v;
    const f = decode(v);
    const ref = await saveFile(db.TaskFile, group, `${field.replace(/[^A-Za-z0-9_-]/g, '_')}-${i}`, f.contentType, f.data);
    refs.push(ref);
    return ref;
  };
  const out: Record<string, unknown> = {};
  try {
    for (const [k, v] of Object.entries(input)) {
      if (TEXT_FIELDS.has(k)) out[k] = v;
      else if (!Array.isArray(v)) out[k] = await keep(k, v, 0);
      else {
        const items: unknown[] = [];
        for (const [i, x] of v.entries()) items.push(await keep(k, x, i));
        out[k] = items;
      }
    }
  } catch (err) {
    await dropInlineFiles(db, refs);
    throw err;
  }
  return { input: out, refs };
}

/** A submission refused after its files were stored (402) leaves nothing behind. */
export async function dropInlineFiles(db: MediaModels, refs: string[]): Promise<void> {
  if (refs.length) await deleteFiles(db.TaskFile, refs).catch(() => undefined);
}
