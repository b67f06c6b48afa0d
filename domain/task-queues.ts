/**
 * The Temporal task queues and which workflow runs on which (docs/architecture: "Worker queues").
 * Media tasks (customers' money), knowledge builds (long, CPU-heavy) and webhook deliveries (slow
 * receivers, 24 h of retries) each have their own queue, served by its own worker process
 * (`workers/main.ts --queue=...`), so one kind of work never waits on another's slots or event loop.
 *
 * Every place that starts a workflow (the gateway's services, the knowledge services, webhook
 * replays, the media workflow's webhook child, the worker's housekeeping) takes its queue from
 * `taskQueueFor`. Pure: workflow code uses it too.
 */

/** The worker queues, as `workers/main.ts --queue=` spells them. */
export const WORKER_QUEUES = ['media', 'knowledge', 'webhooks'] as const;
export type WorkerQueue = (typeof WORKER_QUEUES)[number];

/** Every workflow type the project starts, with the queue that runs it. */
export const WORKFLOW_QUEUE = {
  mediaTaskWorkflow: 'media',
  // Housekeeping of tasks and links, wallet audits and the bench's baseline: the media worker's.
  linkSweeperWorkflow: 'media',
  auditWalletWorkflow: 'media',
  benchNoopWorkflow: 'media',
  // Batches: each line is a billed chat call, like a media task's money.
  batchWorkflow: 'media',
  kbBuildWorkflow: 'knowledge',
  kbSweepWorkflow: 'knowledge',
  taskWebhookWorkflow: 'webhooks',
} as const satisfies Record<string, WorkerQueue>;
export type WorkflowType = keyof typeof WORKFLOW_QUEUE;

/**
 * The Temporal task-queue name of a worker queue: media is the deployment's base name
 * (TEMPORAL_TASK_QUEUE, default `media`), the others `${base}-knowledge` and `${base}-webhooks`.
 */
export function taskQueueName(base: string, queue: WorkerQueue): string {
  return queue === 'media' ? base : `${base}-${queue}`;
}

/** The task queue a workflow of this type is started on. */
export function taskQueueFor(base: string, workflow: WorkflowType): string {
  return taskQueueName(base, WORKFLOW_QUEUE[workflow]);
}

/** The workflow types a worker of this queue registers. */
export function workflowsOf(queue: WorkerQueue): WorkflowType[] {
  return (Object.keys(WORKFLOW_QUEUE) as WorkflowType[]).filter((w) => WORKFLOW_QUEUE[w] === queue);
}

/** `--queue=x` / WORKER_QUEUE, checked; undefined when neither names one. */
export function parseWorkerQueue(value: string | undefined): WorkerQueue | undefined {
  if (value === undefined || value === '') return undefined;
  if ((WORKER_QUEUES as readonly string[]).includes(value)) return value as WorkerQueue;
  throw new Error(`unknown worker queue "${value}": one of ${WORKER_QUEUES.join(', ')}`);
}
