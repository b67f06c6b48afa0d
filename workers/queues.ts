import type { Config } from '../platform/config';
import { parseWorkerQueue, type WorkerQueue } from '../domain/task-queues';

/** How many tasks of each kind one worker process runs at once. */
export interface WorkerSlots {
  /** Regular activities (maxConcurrentActivityTaskExecutions). */
  activities: number;
  /** Workflow activations (maxConcurrentWorkflowTaskExecutions). */
  workflowTasks: number;
  /** Local activities (maxConcurrentLocalActivityExecutions). */
  localActivities: number;
}

/**
 * Each queue's slots, bounded so one worker never takes more work than it can run without
 * starving its own event loop (heartbeats, workflow tasks, the metrics listener). A task past
 * the bound waits in Temporal's queue, where another worker process of the same queue takes it.
 *
 * - media: a task's submit, poll and settle are local activities that mostly wait on the vendor
 *   (a synchronous image call holds its slot up to minutes), so many of them: 200, each a
 *   pending socket and a few kB. Workflow activations are short (a few ms of replay): the SDK's
 *   40. Regular activities are only the link sweeper's and wallet audits: 20.
 * - knowledge: a build's compile is CPU work (run on the knowledge worker threads) and holds
 *   megabytes of text and index; two at a time use both cores of a small host and keep the RSS
 *   bounded. More builds wait their turn in Temporal's queue (and their account's, see
 *   docs/knowledge.md "Fairness"). Its workflows are three steps long: 10 activations, 10 local
 *   activities (recording a failure).
 * - webhooks: deliveries are HTTP calls to customers' receivers, up to WEBHOOK_TIMEOUT_MS (10 s)
 *   each; a slow receiver must not hold everyone's, so 50 at a time; 20 activations and 20 local
 *   activities (opening and closing the event) are ample for that.
 *
 * WORKER_MAX_ACTIVITIES, WORKER_MAX_WORKFLOW_TASKS and WORKER_MAX_LOCAL_ACTIVITIES override them.
 */
export const QUEUE_SLOTS: Record<WorkerQueue, WorkerSlots> = {
  media: { activities: 20, workflowTasks: 40, localActivities: 200 },
  knowledge: { activities: 2, workflowTasks: 10, localActivities: 10 },
  webhooks: { activities: 50, workflowTasks: 20, localActivities: 20 },
};

/** A queue's slots with the process's overrides applied. */
export function slotsOf(
  queue: WorkerQueue,
  config: Partial<Pick<Config, 'WORKER_MAX_ACTIVITIES' | 'WORKER_MAX_WORKFLOW_TASKS' | 'WORKER_MAX_LOCAL_ACTIVITIES'>>,
): WorkerSlots {
  const d = QUEUE_SLOTS[queue];
  return {
    activities: config.WORKER_MAX_ACTIVITIES ?? d.activities,
    workflowTasks: config.WORKER_MAX_WORKFLOW_TASKS ?? d.workflowTasks,
    localActivities: config.WORKER_MAX_LOCAL_ACTIVITIES ?? d.localActivities,
  };
}

/** `--queue=x` on the command line, else WORKER_QUEUE, else media. */
export function queueFromArgs(argv: string[], config: Pick<Config, 'WORKER_QUEUE'>): WorkerQueue {
  const flag = argv.find((a) => a.startsWith('--queue='))?.slice('--queue='.length);
  const i = argv.indexOf('--queue');
  const value = flag ?? (i >= 0 ? argv[i + 1] : undefined);
  return parseWorkerQueue(value) ?? config.WORKER_QUEUE ?? 'media';
}
