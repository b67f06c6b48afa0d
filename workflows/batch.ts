import { defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BatchActivities } from '../activities/batch';

/**
 * One batch (workflowId = batch id; capabilities/batches/): its lines run in slices, each slice one activity that
 * sends its lines to the gateway as live calls with bounded concurrency and records each outcome once
 * (a line with an outcome is never sent again; its charge carries the line's op id, so a line a killed
 * worker had in flight is charged once however often it is sent). A slice heartbeats per line: a worker
 * killed mid-slice is noticed within the heartbeat timeout and the slice runs again elsewhere, skipping
 * what is done. `cancel` stops new slices (the activity also stops taking new lines); lines in flight
 * finish and are billed. Runs on the media task queue.
 */
export interface BatchWorkflowInput {
  batchId: string;
}

export const cancelBatchSignal = defineSignal('cancel');

/** Lines per activity: few enough that a retried slice re-reads little, many enough to keep the lines flowing. */
const SLICE = 250;

const { startBatch, finishBatch } = proxyActivities<BatchActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
const { runBatchLines } = proxyActivities<BatchActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  // Worker kills and deploy swaps cost an attempt each; a slice that keeps failing ends the batch as failed.
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 50 },
});

export async function batchWorkflow(input: BatchWorkflowInput): Promise<{ status: string }> {
  let cancelled = false;
  setHandler(cancelBatchSignal, () => {
    cancelled = true;
  });
  let failed = false;
  try {
    const { total } = await startBatch(input);
    for (let from = 0; from < total && !cancelled; from += SLICE) {
      const r = await runBatchLines({ ...input, from, to: Math.min(total, from + SLICE) });
      if (r.stopped) break;
    }
  } catch {
    // What ran is kept and billed; the batch ends as failed with its output so far.
    failed = true;
  }
  return finishBatch({ ...input, failed });
}
