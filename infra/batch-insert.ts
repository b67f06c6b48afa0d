import type { mongo } from 'mongoose';
import { isDuplicateKey } from './mongo';

/**
 * Group commit for an append-only collection: concurrent inserts are written
 * together with one insertMany through the driver (no mongoose document
 * building), each caller awaiting its own row. An idle writer flushes at the
 * next tick, so a lone insert is not delayed. A row whose _id exists already
 * is a success (that is what makes ledger ops idempotent). FerretDB stops an
 * unordered batch at its first duplicate, so after one the batch is retried
 * row by row.
 */
type Collection<T extends mongo.Document> = mongo.Collection<T>;

export class BatchInserter<T extends mongo.Document & { _id: string }> {
  private queue: Array<{ doc: T; resolve: (inserted: boolean) => void; reject: (err: unknown) => void }> = [];
  private running = false;

  constructor(private readonly collection: () => Collection<T>, private readonly maxBatch = 500) {}

  /** Resolves true when this call wrote the row, false when a row with its _id was there already. */
  insert(doc: T): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ doc, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        await this.collection().insertMany(batch.map((b) => b.doc) as never, { ordered: false });
        for (const b of batch) b.resolve(true);
      } catch (err) {
        if (!isDuplicateKey(err)) {
          for (const b of batch) b.reject(err);
          continue;
        }
        // The rows reported as duplicates exist; every other row is written again one by one (FerretDB stops
        // at its first duplicate; on MongoDB the row was written and its second insert says duplicate).
        const e = err as { writeErrors?: Array<{ index: number; code: number }> | { index: number; code: number } };
        const writeErrors = e.writeErrors === undefined ? [] : Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
        const dup = new Set(writeErrors.filter((w) => w.code === 11000).map((w) => w.index));
        for (const [i, b] of batch.entries()) {
          if (dup.has(i)) {
            b.resolve(false);
            continue;
          }
          try {
            await this.collection().insertOne(b.doc as never);
            b.resolve(true);
          } catch (one) {
            if (isDuplicateKey(one)) b.resolve(false);
            else b.reject(one);
          }
        }
      }
    }
    this.running = false;
  }
}

/**
 * Insert rows whose _id is their business id: a row that exists already is a
 * success (a replay). FerretDB stops an unordered batch at its first
 * duplicate (MongoDB goes on), so after a duplicate the batch is retried row
 * by row. Any other error is thrown: nothing may count as written unless it is.
 */
export async function insertIgnoringDuplicates<T extends mongo.Document>(collection: Collection<T>, docs: T[]): Promise<void> {
  if (docs.length === 0) return;
  try {
    await collection.insertMany(docs as never, { ordered: false });
    return;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  for (const doc of docs) {
    try {
      await collection.insertOne(doc as never);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
}
