/**
 * Where uploaded knowledge-base files are kept. One small interface so an
 * S3-compatible object store can replace the embedded default
 * (`MongoFileStore`, chunks in Mongo as media uploads are kept). Keys are
 * path-safe (`kb/{account}/{kb}/{document}/{hash}`) and name immutable bytes:
 * writing a key twice writes the same bytes.
 */
export interface StoredFile {
  data: Buffer;
  contentType: string;
  filename: string;
}

export interface FileStore {
  /** Store the bytes under `key`; idempotent (a retried activity writes the same file). */
  put(key: string, file: StoredFile): Promise<void>;
  /** The file, or null when it is missing or incompletely written. */
  get(key: string): Promise<StoredFile | null>;
  /** Remove the file; a missing one is not an error. */
  delete(key: string): Promise<void>;
}
