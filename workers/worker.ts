import { NativeConnection, Worker } from '@temporalio/worker';
import type { Config } from '../infra/config';
import { WORKFLOWS_PATH } from '../infra/temporal';
import { createActivities, type ActivityDeps } from '../activities';

/** A worker on the configured task queue, running every workflow and activity of the project. */
export async function createWorker(config: Config, deps: ActivityDeps, opts: { taskQueue?: string } = {}) {
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: opts.taskQueue ?? config.TEMPORAL_TASK_QUEUE,
    ...(config.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: config.WORKFLOW_BUNDLE } } : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities(deps),
  });
  return { worker, connection };
}
