import { loadConfigOrExit } from '../infra/config';
import { createLogger } from '../infra/logger';
import { buildDeps } from '../services/bootstrap';
import { createApp } from './app';
import { drainSettlements } from './chat/settle';
import { startMetrics } from '../metrics/start';
import { currentTracing } from '../tracing/current';
import { answerClientErrors } from './client-errors';
import { guardProcess } from '../infra/process-guards';
import { tuneHeap } from '../infra/heap';

/** Capped by the kernel (net.core.somaxconn). */
const LISTEN_BACKLOG = 4096;

const config = loadConfigOrExit(process.env, 'the gateway');
tuneHeap(config.GATEWAY_HEAP_GROWING_PERCENT);
const log = createLogger(config.LOG_LEVEL, { service: 'gateway' });
guardProcess(log);
const deps = await buildDeps(config, log);
await startMetrics(config, 'gateway', log);
const app = createApp(deps);
// A burst of new connections (2,000 streams opened at once) must not overflow the accept queue: Node's
// default backlog of 511 drops the rest, and their clients retry the handshake only after 1 s, then 3 s.
const server = app.listen({ port: config.PORT, host: config.HOST, backlog: LISTEN_BACKLOG }, () => {
  log.info('gateway listening', { url: `http://${config.HOST}:${config.PORT}` });
});
answerClientErrors(server, log);
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.requestTimeout = 0; // long streams and the 90 s keep-alive image rule manage their own time

/** Stop taking connections, let in-flight requests finish (bounded), write pending settlements, then close stores. */
async function shutdown(signal: string) {
  log.info('gateway stopping', { signal });
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000))]);
  server.closeAllConnections();
  await drainSettlements();
  await deps.close();
  await currentTracing()?.shutdown().catch(() => undefined);
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
