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
import { eventLoopServing } from '../platform/metrics/event-loop';
import { threadCompute } from '../capabilities/knowledge/compute';
import { ensureSearchAttributes } from '../platform/temporal-search-attributes';
import { warnSimulatorChannels } from '../capabilities/catalogue/simulator-check';

const config = loadConfigOrExit(process.env, 'the worker');
const queue = queueFromArgs(process.argv.slice(2), config);
const log = createLogger(config.LOG_LEVEL, { service: 'worker', queue });
guardProcess(log);
const deps = await buildDeps(config, log);
warnSimulatorChannels(config, deps.catalogue(), log);
const metrics = await startMetrics(config, 'worker', log);
metrics?.registry.setDefaultLabels({ service: 'worker', queue });
// The knowledge worker's compile threads: their pool made now, before it serves (it starts no thread until the first
// build, but finding or bundling the threads' entry is start-up work, not a stall of a build's event loop).
const compute = queue === 'knowledge' ? threadCompute({ threads: config.KB_COMPILE_THREADS, heapMb: config.KB_COMPILE_THREAD_MB, nice: config.KB_COMPILE_THREAD_NICE }) : undefined;
const { worker, connection } = await createWorker(config, { ...deps, compute }, { queue });
// A fresh namespace (the chart's Temporal, a new one on a shared cluster) lacks the search attributes every media task
// and knowledge build starts with: registered here when missing, or one warning naming them when the server refuses.
await ensureSearchAttributes(connection.operatorService, config.TEMPORAL_NAMESPACE, log);
if (metrics) {
  watchWorker(metrics, worker);
  watchStore(metrics, deps.db, log);
}
if (queue === 'media') await ensureLinkSweeper(deps.temporal, config.TEMPORAL_TASK_QUEUE, log);
log.info('worker started', { queue, taskQueue: worker.options.taskQueue, namespace: config.TEMPORAL_NAMESPACE, slots: slotsOf(queue, config) });
process.once('SIGINT', () => worker.shutdown());
process.once('SIGTERM', () => worker.shutdown());
// Start-up (module loading, the workflow bundle) is behind it: the loop's stall gauges count from here.
await compute?.ready();
eventLoopServing();
await worker.run();
await connection.close();
await compute?.close();
await deps.close();
await currentTracing()?.shutdown().catch(() => undefined);
log.info('worker stopped');
