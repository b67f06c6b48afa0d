import { lineId, NOT_RUN, type BatchDoc, type BatchModels } from './store';

/** Lines answered 2xx, answered otherwise, and the sum of their charges (nano). */
export interface LineCounts {
  completed: number;
  failed: number;
  costNano: number;
}

/** The counts of these lines' outcomes. */
export function tally(rows: Iterable<{ status_code: number; cost_nano?: number | null }>): LineCounts {
  const c: LineCounts = { completed: 0, failed: 0, costNano: 0 };
  for (const r of rows) {
    if (r.status_code === NOT_RUN) continue; // a record of a line never run: neither answered nor charged
    if (r.status_code >= 200 && r.status_code < 300) c.completed++;
    else c.failed++;
    c.costNano += r.cost_nano ?? 0;
  }
  return c;
}

/** Every line of a batch so far (a read of all its lines: the batch's end, once). */
export async function counts(store: BatchModels, batchId: string): Promise<LineCounts> {
  return tally(await store.Line.find({ batch_id: batchId }, { status_code: 1, cost_nano: 1 }).lean<Array<{ status_code: number; cost_nano: number }>>());
}

/**
 * Progress as a slice ends: the slice's own counts (its lines [from, to), which it has read or
 * written anyway) are kept under its start in the batch document, and the batch's counts are their
 * sum, so a slice costs the same at the end of a 10,000-line batch as at its start (re-reading
 * every line of the batch after each slice made a batch's progress quadratic: 2.5 s a slice at
 * 10,000 lines on the embedded store). Setting, not adding: a slice reported twice (a retry after
 * its worker died) counts once. The batch's end counts every line once more (`counts`).
 */
export async function reportSlice(store: BatchModels, batch: Pick<BatchDoc, '_id'>, from: number, slice: LineCounts): Promise<LineCounts> {
  const doc = await store.Batch.findById(batch._id, { slice_counts: 1 }).lean<Pick<BatchDoc, 'slice_counts'>>();
  const slices = { ...(doc?.slice_counts ?? {}), [String(from)]: slice };
  const total = Object.values(slices).reduce((a, s) => ({ completed: a.completed + s.completed, failed: a.failed + s.failed, costNano: a.costNano + s.costNano }), { completed: 0, failed: 0, costNano: 0 });
  await store.Batch.updateOne({ _id: batch._id }, { $set: { [`slice_counts.${from}`]: slice, completed: total.completed, failed: total.failed, cost_nano: total.costNano } });
  return total;
}

/** Point reads in flight at once (the driver's pool is shared with everything else). */
const READS_AT_ONCE = 16;

/**
 * The lines [from, to) of a batch that already have an outcome (a retried slice's), each read by its
 * id: the embedded store (FerretDB v1) hands SQLite only a plain `_id` equality and decodes the whole
 * collection for any other filter (platform/batch-exists.ts), so a range query read every line of
 * every batch ever run, once a slice (about 1 s at 5,000 lines). On MongoDB both are index reads.
 */
export async function recordedLines(store: BatchModels, batchId: string, from: number, to: number): Promise<Array<{ index: number; status_code: number; cost_nano: number }>> {
  const out: Array<{ index: number; status_code: number; cost_nano: number }> = [];
  for (let i = from; i < to; i += READS_AT_ONCE) {
    const found = await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, to - i) }, (_, j) =>
      store.Line.findById(lineId(batchId, i + j), { index: 1, status_code: 1, cost_nano: 1 }).lean<{ index: number; status_code: number; cost_nano: number }>()));
    for (const f of found) if (f) out.push(f);
  }
  return out;
}
