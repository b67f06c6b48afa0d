/**
 * Names and ids of the workflows other processes start. The gateway starts workflows by name (with the
 * workflow's type for the arguments, `import type`), so it never loads workflow code or
 * @temporalio/workflow: they are the worker's.
 */

/** workflows/media-task.ts `mediaTaskWorkflow`: one per task, workflowId = task id. */
export const MEDIA_TASK_WORKFLOW = 'mediaTaskWorkflow';

/** workflows/task-webhook.ts `taskWebhookWorkflow`. */
export const TASK_WEBHOOK_WORKFLOW = 'taskWebhookWorkflow';

/** The workflow id of a task's webhook delivery (one per task and round: starting it twice is refused). */
export function taskWebhookWorkflowId(taskId: string, round = 0): string {
  return round === 0 ? `webhook-${taskId}` : `webhook-${taskId}-replay-${round}`;
}
