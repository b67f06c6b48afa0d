import type { mongo } from 'mongoose';

type Collection<T extends mongo.Document> = mongo.Collection<T>;

/**
 * Group read for "does a document with this _id exist": the ids asked for in
 * one tick are looked up with one `find({_id: {$in}})` (ids only), each
 * caller awaiting its own answer. Every answer reflects the store at some
 * moment after its caller asked, which is all an existence check before a
 * write needs. An idle reader looks up at the next tick, so a lone check is
 * not delayed.
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
      const ids = batch.map(([id]) => id);
      try {
        const found = await this.collection().find({ _id: { $in: ids } } as never, { projection: { _id: 1 } }).toArray();
        const present = new Set(found.map((d) => String(d._id)));
        for (const [id, waiting] of batch) for (const w of waiting) w.resolve(present.has(id));
      } catch (err) {
        for (const [, waiting] of batch) for (const w of waiting) w.reject(err);
      }
    }
    this.running = false;
  }
}
