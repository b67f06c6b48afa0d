import { ActivityCancellationType, ApplicationFailure, CancellationScope, isCancellation, ParentClosePolicy, patched, proxyLocalActivities, sleep, startChild, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { taskWebhookWorkflow } from './task-webhook';
import { TASK_WEBHOOK_WORKFLOW, taskWebhookWorkflowId } from '../domain/workflow-ids';
import { taskQueueFor } from '../domain/task-queues';
import type { MediaActivities, SettleInput, SyncAnswer, TaskFacts } from '../activities/media';
import type { ProviderOutcome } from '../domain/media/task';
import { mediaErrorJson } from '../domain/error-bodies';

/**
 * Activities run as local activities: in the worker that runs the workflow
 * task, recorded in its history as markers, with no activity-task round trip
 * through the server. A synchronous upstream (most image vendors) is then
 * submitted and settled within the task's first workflow task, by one
 * activity (`submitAndSettleMediaTask`). Crash safety
 * is unchanged: a worker that dies mid-activity loses its workflow task, a
 * new worker replays and re-runs the activity, and every activity is
 * idempotent by the task id.
 *
 * Timeouts and retries are named once here. The submission may wait on a
 * synchronous vendor call (images: up to 280 s over the channel ladder).
 */
const SUBMISSION = {
  startToCloseTimeout: '6 minutes',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '15 seconds', maximumAttempts: 5 },
} as const;
/** Histories started before the settlement moved into the submission (SETTLE_IN_SUBMISSION). */
const { submitMediaTask } = proxyLocalActivities<MediaActivities>(SUBMISSION);
/**
 * Waits for the activity's own end when cancelled: it may be settling a
 * synchronous answer, and the workflow must not settle the task a second
 * time meanwhile (activities/media.ts says how it ends).
 */
const { submitAndSettleMediaTask } = proxyLocalActivities<MediaActivities>({
  ...SUBMISSION,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});
const { pollMediaTask } = proxyLocalActivities<MediaActivities>({
  startToCloseTimeout: '20 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 12 },
});
/** Settlement must happen: retried until it does. */
const { settleMediaTask } = proxyLocalActivities<MediaActivities>({
  startToCloseTimeout: '20 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * The submission settles a synchronous answer itself (docs/workflow-changes.md):
 * a task the vendor answers at once runs one local activity instead of two.
 */
const SETTLE_IN_SUBMISSION = 'media-task-settle-in-submission-20261129';

export interface MediaTaskInput {
  taskId: string;
  /** Poll cadence the vendor needs. */
  pollIntervalMs: number;
  /** The task's lifetime before it expires (images: 280 s); null = the vendor decides. */
  maxRunMs: number | null;
  /** The task has a `callback_url`: its webhook workflow starts once it is settled (docs/webhooks.md). */
  callback?: boolean;
}

export interface MediaTaskResult {
  state: ProviderOutcome['state'];
  costNano: number;
}

function ended(state: 'failed' | 'expired' | 'cancelled', code: string, message: string, clientStatus: number): ProviderOutcome {
  return {
    state, units: 0, urls: [], expiresAt: null, errorCode: code, errorMessage: message, clientStatus,
    clientBody: mediaErrorJson(code, message, state === 'failed' ? 'upstream_error' : 'api_error'),
  };
}

/**
 * One async media task, workflowId = task id: submit upstream (channel
 * ladder), poll on durable timers, then settle on the actual output or refund
 * in full (failure, expiry, cancellation from the Temporal UI). Returns once
 * the task is settled. Hosted links are marked expired by linkSweeperWorkflow.
 */
export async function mediaTaskWorkflow(input: MediaTaskInput): Promise<MediaTaskResult> {
  const startedAt = Date.now();
  let outcome: ProviderOutcome | undefined;
  // What the submission learnt, handed to the settlement so it reads nothing back (see SettleInput).
  let task: TaskFacts | undefined;
  let sync: SyncAnswer | undefined;
  let progress: number | null = null;
  let settled: MediaTaskResult | undefined;
  try {
    await CancellationScope.cancellable(async () => {
      const sub = patched(SETTLE_IN_SUBMISSION) ? await submitAndSettleMediaTask({ taskId: input.taskId }) : await submitMediaTask({ taskId: input.taskId });
      if (sub.kind === 'settled') {
        settled = { state: sub.state, costNano: sub.costNano };
        return;
      }
      task = sub.task;
      if (sub.kind === 'done') {
        outcome = sub.outcome;
        sync = sub.sync;
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
        progress = p.progress;
      }
    });
  } catch (err) {
    if (isCancellation(err)) outcome = ended('cancelled', 'task_cancelled', 'the task was cancelled', 499);
    else outcome = ended('failed', 'upstream_error', `the task failed: ${(err as Error).message}`, 502);
  }
  if (settled) {
    if (input.callback) await CancellationScope.nonCancellable(() => startWebhook(input.taskId));
    return settled;
  }
  if (!outcome) throw ApplicationFailure.nonRetryable('task ended without an outcome');
  const settle: SettleInput = { taskId: input.taskId, outcome, task, sync, progress };
  // The settlement applies the task's first settlement's outcome, which may not be this run's (activities/media.ts).
  const { costNano, state } = await CancellationScope.nonCancellable(() => settleMediaTask(settle));
  if (input.callback) await CancellationScope.nonCancellable(() => startWebhook(input.taskId));
  return { state: state ?? outcome.state, costNano };
}

/**
 * The task's webhook runs on as its own workflow (abandoned child): retries of up to 24 h never hold this one open.
 * It runs on the webhooks queue, named after this workflow's own (the media queue is the deployment's base name).
 */
async function startWebhook(taskId: string): Promise<void> {
  try {
    await startChild<typeof taskWebhookWorkflow>(TASK_WEBHOOK_WORKFLOW, {
      workflowId: taskWebhookWorkflowId(taskId),
      taskQueue: taskQueueFor(workflowInfo().taskQueue, 'taskWebhookWorkflow'),
      args: [{ taskId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
