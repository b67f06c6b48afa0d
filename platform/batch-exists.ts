import type { mongo } from 'mongoose';

type Collection<T extends mongo.Document> = mongo.Collection<T>;

/** Lookups of one batch in flight together (the driver's pool is shared with everything else). */
const LOOKUPS_AT_ONCE = 16;

/**
 * Group read for "does a document with this _id exist": the ids asked for in
 * one tick are looked up together (ids only, LOOKUPS_AT_ONCE in flight), each
 * id once however many callers ask, each caller awaiting its own answer.
 * Every answer reflects the store at some moment after its caller asked,
 * which is all an existence check before a write needs. An idle reader looks
 * up at the next tick, so a lone check is not delayed.
 *
 * Each id is its own `{_id: id}` find, not one `{_id: {$in: ids}}`: FerretDB
 * v1 (the embedded store) pushes only a plain `_id` equality down to SQLite's
 * index and decodes the whole collection for `$in` (measured on 1.24.2: 43 ms
 * at 200 documents, 0.3 s at 2,000, 1.1 s at 6,000; the equality stays a few
 * milliseconds). On MongoDB both use the _id index.
 */
export class BatchExists<T extends mongo.Document & { _id: string }> {
  private queue = new Map<string, Array<{ resolve: (found: boolean) => void; reject: (err: unknown) => void }>>();
  private running = false;

  constructor(private readonly collection: () => Collection<T>, private readonly maxBatch = 500) {}

  has(id: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const waiting = this.queue.get(id);
      if (waiting) waiting.push({ resolve, reject });
      else this.queue.set(id, [{ resolve, reject }]);
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.size) {
      const batch = [...this.queue.entries()].slice(0, this.maxBatch);
      for (const [id] of batch) this.queue.delete(id);
      for (let i = 0; i < batch.length; i += LOOKUPS_AT_ONCE) {
        await Promise.all(batch.slice(i, i + LOOKUPS_AT_ONCE).map(async ([id, waiting]) => {
          try {
            const found = await this.collection().findOne({ _id: id } as never, { projection: { _id: 1 } });
            for (const w of waiting) w.resolve(found !== null);
          } catch (err) {
            for (const w of waiting) w.reject(err);
          }
        }));
      }
    }
    this.running = false;
  }
}
