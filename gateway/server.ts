import { loadConfigOrExit, paymentsConfigProblem } from '../platform/config';
import { createLogger } from '../platform/logger';
import { buildDeps } from '../capabilities/bootstrap';
import { createApp } from './app';
import { drainSettlements } from './chat/settle';
import { startMetrics } from '../capabilities/start-metrics';
import { eventLoopServing } from '../platform/metrics/event-loop';
import { currentTracing } from '../platform/tracing/current';
import { answerClientErrors } from './client-errors';
import { guardProcess } from '../platform/process-guards';
import { warnSimulatorChannels } from '../capabilities/catalogue/simulator-check';
import { heapGrowingPercent, returnStartupGarbage, serverIdle, tuneHeap } from '../platform/heap';

/** Capped by the kernel (net.core.somaxconn). */
const LISTEN_BACKLOG = 4096;

const config = loadConfigOrExit(process.env, 'the gateway');
// Production takes payments through Stripe only: without its keys it refuses to start (docs/payments.md).
const paymentsProblem = paymentsConfigProblem(config);
if (paymentsProblem) {
  process.stderr.write(`gateway: refusing to start: ${paymentsProblem}\n`);
  process.exit(1);
}
tuneHeap(heapGrowingPercent(config.GATEWAY_HEAP_GROWING_PERCENT));
const log = createLogger(config.LOG_LEVEL, { service: 'gateway' });
guardProcess(log);
const deps = await buildDeps(config, log);
warnSimulatorChannels(config, deps.catalogue(), log);
await startMetrics(config, 'gateway', log);
const app = createApp(deps);
// A burst of new connections (2,000 streams opened at once) must not overflow the accept queue: Node's
// default backlog of 511 drops the rest, and their clients retry the handshake only after 1 s, then 3 s.
const server = app.listen({ port: config.PORT, host: config.HOST, backlog: LISTEN_BACKLOG }, () => {
  eventLoopServing();
  log.info('gateway listening', { url: `http://${config.HOST}:${config.PORT}` });
  returnStartupGarbage({ log, idle: watch.idle, onDone: watch.stop });
});
const watch = serverIdle(server);
answerClientErrors(server, log);
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.requestTimeout = 0; // long streams and the 90 s keep-alive image rule manage their own time

/** Set by shutdown(): responses from here on close their connection (a keep-alive client reconnects elsewhere). */
let draining = false;
server.on('request', (_req, res) => {
  if (draining && !res.headersSent) res.setHeader('connection', 'close');
});

/**
 * SIGTERM/SIGINT: stop taking connections, let in-flight requests (streams) finish for up to
 * SHUTDOWN_GRACE_MS, then close what is still open (a stream cut here is billed as a client
 * disconnect), write pending settlements and drain the ledger journal to the store, then exit.
 */
async function shutdown(signal: string) {
  const started = Date.now();
  draining = true;
  log.info('gateway stopping', { signal, graceMs: config.SHUTDOWN_GRACE_MS });
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  let timer: NodeJS.Timeout | undefined;
  const graceOver = await Promise.race([
    closed.then(() => false),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(true), config.SHUTDOWN_GRACE_MS))),
  ]);
  clearTimeout(timer);
  if (graceOver) log.warn('gateway grace over: closing the connections still open', { graceMs: config.SHUTDOWN_GRACE_MS });
  server.closeAllConnections();
  await drainSettlements();
  await deps.close(); // stops the ledger journal after a last drain to the store
  log.info('gateway stopped', { signal, ms: Date.now() - started, graceOver });
  await currentTracing()?.shutdown().catch(() => undefined);
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
