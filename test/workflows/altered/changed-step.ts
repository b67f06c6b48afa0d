import { patched, sleep, workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

/**
 * "The next build" of the media workflow, for the replay tests and the deploy
 * swap (dev/bench/deploy-swap.ts), made without copying workflows/media-task.ts:
 * bundled as a workflow interceptor module beside the real workflows, it adds
 * one step (a 1 ms durable timer) before the task's settlement, the kind of
 * change docs/workflow-changes.md is about.
 *
 * - By default the step is guarded as the rule says (`patched(PATCH_ID)`):
 *   histories recorded before it replay on the old path, new runs take the new one.
 * - For a workflow id that starts with `unguarded:` (the replay test passes
 *   such an id to runReplayHistories) the step is not guarded: replaying an
 *   old history must then fail with a DeterminismViolationError.
 */
export const PATCH_ID = 'media-task-settle-timer-20261127';
export const UNGUARDED_PREFIX = 'unguarded:';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      async scheduleLocalActivity(input, next) {
        if (input.activityType === 'settleMediaTask') {
          if (workflowInfo().workflowId.startsWith(UNGUARDED_PREFIX)) await sleep(1);
          else if (patched(PATCH_ID)) await sleep(1);
        }
        return next(input);
      },
    },
  ],
});
