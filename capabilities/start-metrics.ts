import type { Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import { enableMetrics, type Metrics } from '../platform/metrics/index';
import { serveMetrics } from '../platform/metrics/server';
import { serveMetricsOffThread } from '../platform/metrics/thread-server';
import { watchChannelBreakers } from './catalogue/channel-metrics';
import { watchEventLoop } from '../platform/metrics/event-loop';

/** Metrics on, with their listener, when METRICS_PORT is set; otherwise nothing (and the hooks stay no-ops). */
export async function startMetrics(config: Pick<Config, 'METRICS_PORT' | 'METRICS_HOST'>, service: 'gateway' | 'worker', log: Logger): Promise<Metrics | undefined> {
  if (config.METRICS_PORT === undefined) return undefined;
  const m = enableMetrics(service);
  watchChannelBreakers(m);
  watchEventLoop(m);
  // A worker's listener has its own thread: it answers while a long stretch holds the worker's loop (platform/metrics/thread-server.ts).
  const serve = service === 'worker' ? serveMetricsOffThread : serveMetrics;
  await serve(m.registry, config.METRICS_PORT, config.METRICS_HOST, log);
  return m;
}
