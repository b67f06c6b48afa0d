import type { BatchModels } from './store';

/** A batch's lines so far: answered 2xx, answered otherwise, and the sum of their charges (nano). */
export async function counts(store: BatchModels, batchId: string): Promise<{ completed: number; failed: number; costNano: number }> {
  const rows = await store.Line.find({ batch_id: batchId }, { status_code: 1, cost_nano: 1 }).lean<Array<{ status_code: number; cost_nano: number }>>();
  let completed = 0;
  let failed = 0;
  let costNano = 0;
  for (const r of rows) {
    if (r.status_code >= 200 && r.status_code < 300) completed++;
    else failed++;
    costNano += r.cost_nano ?? 0;
  }
  return { completed, failed, costNano };
}
