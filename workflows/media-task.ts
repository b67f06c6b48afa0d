import {
  ApplicationFailure, CancellationScope, ParentClosePolicy, isCancellation, proxyActivities, sleep, startChild, workflowInfo,
} from '@temporalio/workflow';
import type { MediaActivities } from '../activities/media';
import type { ProviderOutcome } from '../providers/media/types';

/** Named once: the submission may wait on a synchronous vendor call (images: up to 280 s over the ladder). */
const { submitMediaTask } = proxyActivities<MediaActivities>({
  startToCloseTimeout: '6 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds', maximumAttempts: 5 },
});
const { pollMediaTask } = proxyActivities<MediaActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 12 },
});
/** Settlement must happen: retried until it does. */
const { settleMediaTask, expireMediaLinks } = proxyActivities<MediaActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export interface MediaTaskInput {
  taskId: string;
  /** Poll cadence the vendor needs. */
  pollIntervalMs: number;
  /** The task's lifetime before it expires (images: 280 s); null = the vendor decides. */
  maxRunMs: number | null;
}

export interface MediaTaskResult {
  state: ProviderOutcome['state'];
  costNano: number;
}

function ended(state: 'failed' | 'expired' | 'cancelled', code: string, message: string, clientStatus: number): ProviderOutcome {
  return {
    state, units: 0, urls: [], expiresAt: null, errorCode: code, errorMessage: message, clientStatus,
    clientBody: JSON.stringify({ error: { code, message, param: null, type: state === 'failed' ? 'upstream_error' : 'api_error' } }),
  };
}

/**
 * One async media task, workflowId = task id: submit upstream (channel
 * ladder), poll on durable timers, then settle on the actual output or
 * refund in full. The workflow returns once the task is settled; a child
 * workflow (abandoned on close) marks hosted links expired after their lifetime.
 */
export async function mediaTaskWorkflow(input: MediaTaskInput): Promise<MediaTaskResult> {
  const startedAt = Date.now();
  let outcome: ProviderOutcome | undefined;
  try {
    await CancellationScope.cancellable(async () => {
      const sub = await submitMediaTask({ taskId: input.taskId });
      if (sub.kind === 'done') {
        outcome = sub.outcome;
        return;
      }
      for (;;) {
        if (input.maxRunMs !== null && Date.now() - startedAt >= input.maxRunMs) {
          outcome = ended('expired', 'task_expired', `the task did not finish within ${input.maxRunMs / 1000} s`, 504);
          return;
        }
        await sleep(input.pollIntervalMs);
        const p = await pollMediaTask({ taskId: input.taskId, channelId: sub.channelId, upstreamTaskId: sub.upstreamTaskId });
        if (p.outcome) {
          outcome = p.outcome;
          return;
        }
      }
    });
  } catch (err) {
    if (isCancellation(err)) outcome = ended('cancelled', 'task_cancelled', 'the task was cancelled', 499);
    else outcome = ended('failed', 'upstream_error', `the task failed: ${(err as Error).message}`, 502);
  }
  if (!outcome) throw ApplicationFailure.nonRetryable('task ended without an outcome');
  const final = outcome;
  const { costNano } = await CancellationScope.nonCancellable(() => settleMediaTask({ taskId: input.taskId, outcome: final }));
  if (final.state === 'succeeded' && final.expiresAt !== null) {
    await startChild(expireLinksWorkflow, {
      workflowId: `${workflowInfo().workflowId}:links`,
      args: [{ taskId: input.taskId, expiresAt: final.expiresAt }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  }
  return { state: final.state, costNano };
}

/** Waits until the hosted links' expiry, then marks them expired on the task. */
export async function expireLinksWorkflow(input: { taskId: string; expiresAt: number }): Promise<void> {
  const wait = input.expiresAt - Date.now();
  if (wait > 0) await sleep(wait);
  await expireMediaLinks({ taskId: input.taskId });
}
