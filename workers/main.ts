// One worker process of one queue: `workers/main.ts --queue=media|knowledge|webhooks` (or WORKER_QUEUE;
// default media). Run one process (or more) per queue; each takes its own METRICS_PORT.
import { loadConfigOrExit } from '../platform/config';
import { createLogger } from '../platform/logger';
import { guardProcess } from '../platform/process-guards';
import { buildDeps } from '../capabilities/bootstrap';
import { createWorker, ensureLinkSweeper } from './worker';
import { queueFromArgs, slotsOf } from './queues';
import { startMetrics } from '../capabilities/start-metrics';
import { watchStore } from '../platform/metrics/store';
import { watchWorker } from '../platform/metrics/temporal';
import { currentTracing } from '../platform/tracing/current';

const config = loadConfigOrExit(process.env, 'the worker');
const queue = queueFromArgs(process.argv.slice(2), config);
const log = createLogger(config.LOG_LEVEL, { service: 'worker', queue });
guardProcess(log);
const deps = await buildDeps(config, log);
const metrics = await startMetrics(config, 'worker', log);
metrics?.registry.setDefaultLabels({ service: 'worker', queue });
const { worker, connection } = await createWorker(config, deps, { queue });
if (metrics) {
  watchWorker(metrics, worker);
  watchStore(metrics, deps.db, log);
}
if (queue === 'media') await ensureLinkSweeper(deps.temporal, config.TEMPORAL_TASK_QUEUE, log);
log.info('worker started', { queue, taskQueue: worker.options.taskQueue, namespace: config.TEMPORAL_NAMESPACE, slots: slotsOf(queue, config) });
process.once('SIGINT', () => worker.shutdown());
process.once('SIGTERM', () => worker.shutdown());
await worker.run();
await connection.close();
await deps.close();
await currentTracing()?.shutdown().catch(() => undefined);
log.info('worker stopped');
