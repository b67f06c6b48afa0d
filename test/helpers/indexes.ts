import mongoose, { type Model } from 'mongoose';

/** A store query as mongoose sends it: its collection, method, filter and sort. */
export interface SentQuery {
  collection: string;
  method: string;
  filter: Record<string, unknown>;
  sort?: Record<string, unknown>;
}

const FILTERING = new Set(['find', 'findOne', 'updateMany', 'updateOne', 'deleteMany', 'deleteOne', 'countDocuments', 'findOneAndUpdate']);

/** The queries `run` sends through mongoose (every connection of this process). */
export async function captureQueries(run: () => Promise<unknown>): Promise<SentQuery[]> {
  const seen: SentQuery[] = [];
  mongoose.set('debug', (collection: string, method: string, ...args: unknown[]) => {
    const [filter] = args;
    if (!FILTERING.has(method) || !filter || typeof filter !== 'object') return;
    const options = args.find((a): a is { sort: Record<string, unknown> } => !!a && typeof a === 'object' && 'sort' in a);
    seen.push({ collection, method, filter: filter as Record<string, unknown>, ...(options ? { sort: options.sort } : {}) });
  });
  try {
    await run();
  } finally {
    mongoose.set('debug', false);
  }
  return seen;
}

function fieldsOf(filter: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(filter)) {
    if (k === '$and' && Array.isArray(v)) for (const part of v) out.push(...fieldsOf(part as Record<string, unknown>));
    else if (!k.startsWith('$')) out.push(k);
  }
  return out;
}

/**
 * The queries of `queries` on the models' collections that no declared index serves, described: an
 * index serves a query when its first key is a field of the filter (or, for an empty filter, of the
 * sort). A filter on `_id` is served by its own index. MongoDB would scan the whole collection for the others.
 */
export function unservedQueries(queries: SentQuery[], models: Array<Model<any>>): string[] {
  const indexes = new Map(models.map((m) => [m.collection.collectionName, m.schema.indexes().map(([keys]) => Object.keys(keys))]));
  const out: string[] = [];
  for (const q of queries) {
    const declared = indexes.get(q.collection);
    if (!declared) continue;
    const fields = fieldsOf(q.filter);
    if (fields.includes('_id')) continue;
    const keys = fields.length > 0 ? fields : Object.keys(q.sort ?? {});
    if (keys.length === 0) continue; // a whole-collection read, by design (the catalogue's, say)
    if (!declared.some((index) => keys.includes(index[0]))) {
      out.push(`${q.collection}.${q.method}(${JSON.stringify(q.filter)}${q.sort ? `, sort ${JSON.stringify(q.sort)}` : ''}) among ${JSON.stringify(declared)}`);
    }
  }
  return out;
}
