import { loadConfigOrExit } from '../infra/config';
import { createLogger } from '../infra/logger';
import { guardProcess } from '../infra/process-guards';
import { buildDeps } from '../services/bootstrap';
import { createWorker, ensureLinkSweeper } from './worker';
import { startMetrics } from '../metrics/start';
import { watchStore } from '../metrics/store';
import { watchWorker } from '../metrics/temporal';
import { currentTracing } from '../tracing/current';

const config = loadConfigOrExit(process.env, 'the worker');
const log = createLogger(config.LOG_LEVEL, { service: 'worker' });
guardProcess(log);
const deps = await buildDeps(config, log);
const metrics = await startMetrics(config, 'worker', log);
const { worker, connection } = await createWorker(config, deps);
if (metrics) {
  watchWorker(metrics, worker);
  watchStore(metrics, deps.db, log);
}
await ensureLinkSweeper(deps.temporal, config.TEMPORAL_TASK_QUEUE, log);
log.info('worker started', { taskQueue: config.TEMPORAL_TASK_QUEUE, namespace: config.TEMPORAL_NAMESPACE });
process.once('SIGINT', () => worker.shutdown());
process.once('SIGTERM', () => worker.shutdown());
await worker.run();
await connection.close();
await deps.close();
await currentTracing()?.shutdown().catch(() => undefined);
log.info('worker stopped');
