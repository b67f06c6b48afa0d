import type { ProviderCall, TaskFiles } from './types';

/**
 * Large files kept out of task documents (MongoDB's 16 MB limit) and out of
 * Temporal payloads: uploaded reference images and big `b64_json` answers
 * live in `task_files` as chunks of at most 8 MB. The task input or final
 * body holds a reference `task-file:{group}/{file}/{chunks}` instead.
 */
export const CHUNK_BYTES = 8 * 1024 * 1024;
export const FILE_REF_PREFIX = 'task-file:';

export const isFileRef = (v: unknown): v is string => typeof v === 'string' && v.startsWith(FILE_REF_PREFIX);

/** Lean reads give a BSON Binary, not a Buffer. */
function asBuffer(v: unknown): Buffer {
  if (Buffer.isBuffer(v)) return v;
  const b = v as { buffer?: Uint8Array; position?: number };
  if (b?.buffer instanceof Uint8Array) return Buffer.from(b.buffer.buffer, b.buffer.byteOffset, b.position ?? b.buffer.byteLength);
  throw new Error('task file chunk holds no bytes');
}

const chunkId = (group: string, file: string, i: number) => `${group}/${file}/${i}`;

/** Store `data` under `{group}/{file}`; writing the same file twice (a retried activity) replaces it. */
export async function saveFile(files: TaskFiles, group: string, file: string, contentType: string, data: Buffer): Promise<string> {
  if (group.includes('/') || file.includes('/')) throw new Error('task file group and name must not contain "/"');
  const chunks = Math.max(1, Math.ceil(data.length / CHUNK_BYTES));
  const now = new Date();
  for (let i = 0; i < chunks; i++) {
    const doc = { _id: chunkId(group, file, i), group, content_type: contentType, data: data.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES), created_at: now };
    await files.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }
  return `${FILE_REF_PREFIX}${group}/${file}/${chunks}`;
}

/** The bytes and content type behind a `task-file:` reference. */
export async function loadFile(files: TaskFiles, ref: string): Promise<{ contentType: string; data: Buffer }> {
  const r = parseRef(ref);
  const parts: Buffer[] = [];
  let contentType = 'application/octet-stream';
  for (let i = 0; i < r.chunks; i++) {
    const doc = await files.findById(chunkId(r.group, r.file, i)).lean();
    if (!doc) throw new Error(`task file ${r.group}/${r.file} is missing chunk ${i}`);
    contentType = doc.content_type;
    parts.push(asBuffer(doc.data));
  }
  return { contentType, data: parts.length === 1 ? parts[0] : Buffer.concat(parts) };
}

const parseRef = (ref: string) => {
  const m = /^task-file:([^/]+)\/([^/]+)\/(\d+)$/.exec(ref);
  if (!m) throw new Error(`not a task file reference: ${ref.slice(0, 80)}`);
  return { group: m[1], file: m[2], chunks: Number(m[3]) };
};

/** Delete stored files by reference (by primary key: no collection scan, also on FerretDB). */
export async function deleteFiles(files: TaskFiles, refs: string[]): Promise<void> {
  for (const ref of refs) {
    const r = parseRef(ref);
    for (let i = 0; i < r.chunks; i++) await files.deleteOne({ _id: chunkId(r.group, r.file, i) });
  }
}

const filesOf = (call: ProviderCall): TaskFiles => {
  if (!call.taskFiles) throw new Error('this task references stored files but the adapter was given no task file store');
  return call.taskFiles;
};

/**
 * A `task-file:` reference back to the `data:` URI the client sent; any other value unchanged. Only the
 * task's own files (stored under its submission's request id) are loaded: a reference to another group
 * would hand another submission's upload to this task's vendor.
 */
export async function resolveValue(call: ProviderCall, v: unknown): Promise<unknown> {
  if (isFileRef(v)) {
    if (parseRef(v).group !== call.task.request_id) throw new Error(`task ${call.task._id} references a stored file of another submission`);
    const f = await loadFile(filesOf(call), v);
    return `data:${f.contentType};base64,${f.data.toString('base64')}`;
  }
  if (Array.isArray(v) && v.some(isFileRef)) return Promise.all(v.map((x) => resolveValue(call, x)));
  return v;
}

/** The task input as the client sent it: every top-level stored file becomes its `data:` URI again. */
export async function resolveInput(call: ProviderCall, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) out[k] = await resolveValue(call, v);
  return out;
}

/** Answers above this are stored as a file: they would bloat Temporal payloads (warned at 512 KB, refused at 2 MB) and task documents. */
export const INLINE_BODY_MAX_BYTES = 256 * 1024;

/** The client body to keep on the task: itself when small, else a reference to it (deterministic per task). */
export async function keepBody(call: ProviderCall, body: string): Promise<string> {
  if (Buffer.byteLength(body) <= INLINE_BODY_MAX_BYTES || !call.taskFiles) return body;
  return saveFile(call.taskFiles, call.task._id, 'answer', 'application/json', Buffer.from(body));
}

/** A final body as the client must see it (a stored reference is loaded). */
export async function bodyText(files: TaskFiles, body: string): Promise<string> {
  return isFileRef(body) ? (await loadFile(files, body)).data.toString('utf8') : body;
}
