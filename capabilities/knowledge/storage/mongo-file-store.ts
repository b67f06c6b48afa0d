import type { KnowledgeModels } from '../store';
import type { FileStore, StoredFile } from './file-store';
import { upsertRacing } from '../../../platform/upsert';

/** 8 MB chunks keep each document far below MongoDB's 16 MB limit. */
export const KB_FILE_CHUNK_BYTES = 8 * 1024 * 1024;

const chunkId = (key: string, i: number) => `${key}#${i}`;

/** Lean reads give a BSON Binary, not a Buffer. */
function asBuffer(v: unknown): Buffer {
  if (Buffer.isBuffer(v)) return v;
  const b = v as { buffer?: Uint8Array; position?: number };
  if (b?.buffer instanceof Uint8Array) return Buffer.from(b.buffer.buffer, b.buffer.byteOffset, b.position ?? b.buffer.byteLength);
  throw new Error('stored file chunk holds no bytes');
}

/**
 * The embedded default store: files as 8 MB chunks in `kb_files`. Chunk 0
 * (with the metadata) is written last and deleted first, so a reader sees a
 * whole file or none, without transactions.
 */
export class MongoFileStore implements FileStore {
  constructor(private readonly files: KnowledgeModels['KbFile']) {}

  async put(key: string, file: StoredFile): Promise<void> {
    const chunks = Math.max(1, Math.ceil(file.data.length / KB_FILE_CHUNK_BYTES));
    const now = new Date();
    for (let i = chunks - 1; i >= 0; i--) {
      const doc = {
        _id: chunkId(key, i), key, chunk: i, chunks, content_type: file.contentType, filename: file.filename,
        size: file.data.length, data: file.data.subarray(i * KB_FILE_CHUNK_BYTES, (i + 1) * KB_FILE_CHUNK_BYTES), created_at: now,
      };
      // Two uploads of the same bytes store the same chunk: the one that loses the insert race writes again.
      await upsertRacing(() => this.files.replaceOne({ _id: doc._id }, doc, { upsert: true }));
    }
  }

  async get(key: string): Promise<StoredFile | null> {
    const head = await this.files.findById(chunkId(key, 0)).lean();
    if (!head) return null;
    const parts = [asBuffer(head.data)];
    for (let i = 1; i < head.chunks; i++) {
      const doc = await this.files.findById(chunkId(key, i)).lean();
      if (!doc) return null;
      parts.push(asBuffer(doc.data));
    }
    const data = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    return { data, contentType: head.content_type, filename: head.filename };
  }

  async delete(key: string): Promise<void> {
    const head = await this.files.findById(chunkId(key, 0)).select({ chunks: 1 }).lean();
    if (!head) return;
    for (let i = 0; i < head.chunks; i++) await this.files.deleteOne({ _id: chunkId(key, i) });
  }
}
