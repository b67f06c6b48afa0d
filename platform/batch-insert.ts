import type { mongo } from 'mongoose';
import { isDuplicateKey } from './mongo';

/**
 * Group commit for an append-only collection: concurrent inserts are written
 * together with one insertMany through the driver (no mongoose document
 * building), each caller awaiting its own row. An idle writer flushes at the
 * next tick, so a lone insert is not delayed. A row whose _id exists already
 * is a success (that is what makes ledger ops idempotent). After a duplicate,
 * rows the store did not report as written or existing are retried row by
 * row (`duplicatesOf`).
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
        const { dup, accounted } = duplicatesOf(err, batch.length);
        for (const [i, b] of batch.entries()) {
          if (dup.has(i) || accounted) {
            b.resolve(!dup.has(i));
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
    if (duplicatesOf(err, docs.length).accounted) return;
  }
  for (const doc of docs) {
    try {
      await collection.insertOne(doc as never);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
}

/**
 * What an unordered insertMany that failed on duplicates did: the indexes of
 * the rows that exist already, and whether every row is accounted for
 * (written, or a duplicate): then nothing is left to write. MongoDB goes on
 * past a duplicate in an unordered batch, and so does FerretDB v1.24 (a
 * batch that fails is written row by row on the server, each duplicate
 * reported); whatever reports fewer goes through the row-by-row path.
 */
export function duplicatesOf(err: unknown, rows: number): { dup: Set<number>; accounted: boolean } {
  const e = err as { writeErrors?: Array<{ index: number; code: number }> | { index: number; code: number }; insertedCount?: number; result?: { insertedCount?: number } };
  const writeErrors = e.writeErrors === undefined ? [] : Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
  const dup = new Set(writeErrors.filter((w) => w.code === 11000).map((w) => w.index));
  const inserted = e.insertedCount ?? e.result?.insertedCount;
  const accounted = dup.size === writeErrors.length && typeof inserted === 'number' && inserted + dup.size === rows;
  return { dup, accounted };
}
