import { NativeConnection, Worker } from '@temporalio/worker';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Logger } from '../infra/logger';
import type { Config } from '../infra/config';
import { WORKFLOWS_PATH } from '../infra/temporal';
import { createActivities, type ActivityDeps } from '../activities';
import { linkSweeperWorkflow, LINK_SWEEPER_ID } from '../workflows/link-sweeper';
import { currentMetrics } from '../metrics/index';
import { activityMetrics } from '../metrics/temporal';
import { workerTracing, WORKFLOW_INTERCEPTORS_PATH } from '../tracing/temporal';

/** How long a workflow task waits on a worker's sticky queue before any worker may take it. */
export const STICKY_SCHEDULE_TO_START = '3s';

/** A worker on the configured task queue, running every workflow and activity of the project. */
export async function createWorker(config: Config, deps: ActivityDeps, opts: { taskQueue?: string } = {}) {
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const traced = workerTracing();
  const metrics = currentMetrics();
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: opts.taskQueue ?? config.TEMPORAL_TASK_QUEUE,
    ...(config.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: config.WORKFLOW_BUNDLE } } : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities(deps),
    // A worker that dies (a crash, a deploy's SIGKILL) leaves the next workflow task of every workflow it had
    // cached on its sticky queue, where nobody polls; the server moves it to the shared queue only after this
    // timeout (the SDK's default, 10 s, stalled every task of a killed worker for 10 s in the chaos runs). A
    // live worker takes its sticky tasks in milliseconds; one too busy for 3 s hands them to another, which
    // replays the (short) history.
    stickyQueueScheduleToStartTimeout: STICKY_SCHEDULE_TO_START,
    // SIGTERM (workers/main.ts): polling stops at once, running activities get this long to finish (then are cancelled).
    shutdownGraceTime: config.SHUTDOWN_GRACE_MS,
    // Tracing (tracing/temporal.ts) and activity metrics (metrics/temporal.ts); both empty when off.
    interceptors: {
      // A prebuilt bundle has them already (scripts/bundle-workflows.ts).
      ...(config.WORKFLOW_BUNDLE ? {} : { workflowModules: [WORKFLOW_INTERCEPTORS_PATH] }),
      activity: [...traced.activity, ...(metrics ? [activityMetrics(metrics)] : [])],
    },
    sinks: traced.sinks,
  });
  return { worker, connection };
}

/** How often the housekeeping workflow runs (orphaned tasks, expired links). */
export const LINK_SWEEP_INTERVAL_MS = 60 * 1000;

/** Start the deployment's single link sweeper unless it already runs. */
export async function ensureLinkSweeper(client: Client, taskQueue: string, log: Logger): Promise<void> {
  try {
    await client.workflow.start(linkSweeperWorkflow, {
      taskQueue, workflowId: LINK_SWEEPER_ID, args: [{ intervalMs: LINK_SWEEP_INTERVAL_MS }],
    });
    log.info('link sweeper started');
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
