import { Worker as Thread } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { NativeConnection, Worker } from '@temporalio/worker';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../platform/logger';
import type { Config } from '../platform/config';
import { temporalConnectionOptions, workflowBundleOf, workflowsPathOf } from '../platform/temporal';
import { createQueueActivities, type ActivityDeps } from '../activities';
import { linkSweeperWorkflow, LINK_SWEEPER_ID } from '../workflows/link-sweeper';
import { taskQueueFor, taskQueueName, WORKER_QUEUES, type WorkerQueue } from '../domain/task-queues';
import { slotsOf } from './queues';
import { currentMetrics } from '../platform/metrics/index';
import { activityMetrics } from '../platform/metrics/temporal';
import { workerTracing, WORKFLOW_INTERCEPTORS_PATH } from '../platform/tracing/temporal';

/**
 * Without a prebuilt bundle (WORKFLOW_BUNDLE; `npm run dev`), the queue's workflows are bundled at start,
 * as the SDK would for `workflowsPath`, but in a worker thread that exits when done: webpack's working
 * memory (about 100 MB) goes with the thread instead of staying in this process's heap for its life.
 */
async function bundleInThread(workflowsPath: string): Promise<string> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { bundleWorkflowCode } = require(workerData.temporal);
    const quiet = { log() {}, info() {}, warn() {}, error: (...a) => console.error(...a), debug() {}, trace() {} };
    bundleWorkflowCode({ workflowsPath: workerData.workflowsPath, workflowInterceptorModules: workerData.interceptors, logger: quiet })
      .then(({ code }) => parentPort.postMessage({ code }), (err) => parentPort.postMessage({ error: String((err && err.stack) || err) }));`;
  const thread = new Thread(source, {
    eval: true,
    execArgv: [],
    workerData: { temporal: createRequire(import.meta.url).resolve('@temporalio/worker'), workflowsPath, interceptors: [WORKFLOW_INTERCEPTORS_PATH] },
  });
  try {
    const answer = await new Promise<{ code?: string; error?: string }>((resolve, reject) => {
      thread.once('message', resolve);
      thread.once('error', reject);
      thread.once('exit', (code) => reject(new Error(`the workflow bundler thread exited (${code})`)));
    });
    if (answer.error !== undefined || answer.code === undefined) throw new Error(`bundling ${workflowsPath} failed: ${answer.error}`);
    return answer.code;
  } finally {
    await thread.terminate();
  }
}

/** How long a workflow task waits on a worker's sticky queue before any worker may take it. */
export const STICKY_SCHEDULE_TO_START = '3s';

/**
 * A worker of one queue (domain/task-queues.ts; media unless told): it polls that queue's Temporal
 * task queue and registers that queue's workflows and activities only, with its bounded slots
 * (workers/queues.ts).
 */
export async function createWorker(config: Config, deps: ActivityDeps, opts: { queue?: WorkerQueue; taskQueue?: string } = {}) {
  const queue = opts.queue ?? 'media';
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const traced = workerTracing();
  const metrics = currentMetrics();
  const slots = slotsOf(queue, config);
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: opts.taskQueue ?? taskQueueName(config.TEMPORAL_TASK_QUEUE, queue),
    ...(config.WORKFLOW_BUNDLE
      ? { workflowBundle: { codePath: workflowBundleOf(config.WORKFLOW_BUNDLE, queue) } }
      : { workflowBundle: { code: await bundleInThread(workflowsPathOf(queue)) } }),
    activities: createQueueActivities(queue, deps),
    maxConcurrentActivityTaskExecutions: slots.activities,
    maxConcurrentWorkflowTaskExecutions: slots.workflowTasks,
    maxConcurrentLocalActivityExecutions: slots.localActivities,
    // A worker that dies (a crash, a deploy's SIGKILL) leaves the next workflow task of every workflow it had
    // cached on its sticky queue, where nobody polls; the server moves it to the shared queue only after this
    // timeout (the SDK's default, 10 s, stalled every task of a killed worker for 10 s in the chaos runs). A
    // live worker takes its sticky tasks in milliseconds; one too busy for 3 s hands them to another, which
    // replays the (short) history.
    stickyQueueScheduleToStartTimeout: STICKY_SCHEDULE_TO_START,
    // SIGTERM (workers/main.ts): polling stops at once, running activities get this long to finish (then are cancelled).
    shutdownGraceTime: config.SHUTDOWN_GRACE_MS,
    // Tracing (platform/tracing/temporal.ts) and activity metrics (platform/metrics/temporal.ts); both empty when off.
    interceptors: {
      // The bundle has them already (dev/scripts/bundle-workflows.ts, bundleInThread).
      activity: [...traced.activity, ...(metrics ? [activityMetrics(metrics)] : [])],
    },
    sinks: traced.sinks,
  });
  return { worker, connection, queue };
}

/** One worker per queue in this process (tests, small single-process setups): each still its own queue and slots. */
export async function createWorkers(config: Config, deps: ActivityDeps, queues: readonly WorkerQueue[] = WORKER_QUEUES) {
  const workers = await Promise.all(queues.map((queue) => createWorker(config, deps, { queue })));
  let runs: Promise<void>[] = [];
  return {
    workers,
    run(): Promise<void> {
      runs = workers.map((w) => w.worker.run());
      return Promise.all(runs).then(() => undefined);
    },
    async shutdown(): Promise<void> {
      for (const w of workers) if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
      await Promise.all(runs.map((r) => r.catch(() => undefined)));
      await Promise.all(workers.map((w) => w.connection.close()));
    },
  };
}

/** How often the housekeeping workflow runs (orphaned tasks, expired links). */
export const LINK_SWEEP_INTERVAL_MS = 60 * 1000;

/**
 * The sweeper's workflow id: one per deployment, and a deployment is its base task queue. Deployments
 * sharing a Temporal namespace (staging beside production, a second region, the test suite's files) each
 * sweep their own store: with one id for the namespace, the first deployment's sweeper was the only one,
 * ran on that deployment's queue, and the others' orphaned tasks were never resumed (a chaos run in a
 * suite series found one still queued: the sweeper of an earlier test file's queue held the id).
 */
export function linkSweeperId(baseTaskQueue: string): string {
  return `${LINK_SWEEPER_ID}:${baseTaskQueue}`;
}

/**
 * Start this deployment's link sweeper unless it already runs (by the media workers: it runs on their
 * queue). A sweeper under the id every deployment once shared (`media-link-sweeper`) that runs on this
 * deployment's queue is replaced: stopped once this one runs.
 */
export async function ensureLinkSweeper(client: Client, baseTaskQueue: string, log: Logger): Promise<void> {
  const taskQueue = taskQueueFor(baseTaskQueue, 'linkSweeperWorkflow');
  try {
    await client.workflow.start(linkSweeperWorkflow, {
      taskQueue, workflowId: linkSweeperId(baseTaskQueue), args: [{ intervalMs: LINK_SWEEP_INTERVAL_MS }],
    });
    log.info('link sweeper started', { workflowId: linkSweeperId(baseTaskQueue) });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  try {
    const legacy = client.workflow.getHandle(LINK_SWEEPER_ID);
    const d = await legacy.describe();
    if (d.status.name === 'RUNNING' && d.taskQueue === taskQueue) {
      await legacy.terminate(`replaced by ${linkSweeperId(baseTaskQueue)}`);
      log.info('link sweeper under the shared id replaced', { workflowId: linkSweeperId(baseTaskQueue) });
    }
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) log.warn('link sweeper under the shared id not checked', { err });
  }
}
