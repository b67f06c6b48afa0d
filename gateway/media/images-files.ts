import type { Db } from '../../infra/mongo';
import { deleteGroup, saveFile } from '../../providers/media/images-files';

/**
 * Reference images sent inline (`data:` URIs from JSON, or uploaded files)
 * are stored in `task_files` under the request id before the task is
 * written, so the task document stays far below MongoDB's 16 MB limit
 * whatever the 95 MB body held. The adapter loads them back
 * (providers/media/images-files.ts).
 */
const DATA_URI = /^data:([^;,]+)?(;[^,]*)?,/;

function decode(uri: string): { contentType: string; data: Buffer } {
  const m = DATA_URI.exec(uri)!;
  const payload = uri.slice(m[0].length);
  const base64 = (m[2] ?? '').split(';').includes('base64');
  return { contentType: m[1] ?? 'application/octet-stream', data: base64 ? Buffer.from(payload, 'base64') : Buffer.from(decodeURIComponent(payload)) };
}

/** The input with every top-level `data:` value (or array item) replaced by a `task-file:` reference. */
export async function storeInlineFiles(db: Db, group: string, input: Record<string, unknown>): Promise<{ input: Record<string, unknown>; stored: number }> {
  let stored = 0;
  const keep = async (field: string, v: unknown, i: number): Promise<unknown> => {
    if (typeof v !== 'string' || !DATA_URI.test(v)) return v;
    const f = decode(v);
    stored++;
    return saveFile(db.TaskFile, group, `${field.replace(/[^A-Za-z0-9_-]/g, '_')}-${i}`, f.contentType, f.data);
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    out[k] = Array.isArray(v) ? await Promise.all(v.map((x, i) => keep(k, x, i))) : await keep(k, v, 0);
  }
  return { input: out, stored };
}

/** A submission that was refused after its files were stored leaves nothing behind. */
export async function dropInlineFiles(db: Db, group: string): Promise<void> {
  await deleteGroup(db.TaskFile, group).catch(() => undefined);
}
