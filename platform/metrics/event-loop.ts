import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, Histogram } from 'prom-client';
import type { Metrics } from './registry';

/** One reading per second; the gauges cover the last minute of them. */
let clearWindow: (() => void) | null = null;

/**
 * The process starts serving now (a worker's first poll, a gateway's first request): what the loop did
 * before (loading modules, connecting, bundling workflows) held nobody up, and is dropped from the
 * last-minute gauges. The per-second histogram keeps its counts (it says when those seconds were slow).
 */
export function eventLoopServing(): void {
  clearWindow?.();
}

const WINDOW_MS = 1000;
const WINDOWS_KEPT = 60;

/**
 * How late this process's event loop runs timers and I/O callbacks (`monitorEventLoopDelay`, 10 ms
 * resolution), the measure of a synchronous stretch: while one runs, nothing else on the loop
 * (workflow activations, local activities, heartbeats, this listener) moves. Each second the
 * longest delay of that second is observed into a histogram, so `le="0.05"` counts the seconds
 * under 50 ms whoever scrapes and however often; the gauges give the worst of the last minute.
 * (prom-client's `nodejs_eventloop_lag_*` are reset by every scrape instead.)
 */
export function watchEventLoop(m: Metrics): () => void {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const registers = [m.registry];
  const perSecond = new Histogram({
    name: 'gateway_event_loop_delay_seconds',
    help: 'The longest event-loop delay of each second (monitorEventLoopDelay): the count of seconds by their worst stall',
    buckets: [0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const maxima: number[] = [];
  const p99s: number[] = [];
  const read = () => {
    // Values are nanoseconds; the resolution's own 10 ms is part of every sample.
    const max = h.max / 1e9;
    const p99 = h.percentile(99) / 1e9;
    h.reset();
    perSecond.observe(max);
    maxima.push(max);
    p99s.push(p99);
    if (maxima.length > WINDOWS_KEPT) {
      maxima.shift();
      p99s.shift();
    }
  };
  clearWindow = () => {
    h.reset();
    maxima.length = 0;
    p99s.length = 0;
  };
  const timer = setInterval(read, WINDOW_MS);
  timer.unref();
  new Gauge({
    name: 'gateway_event_loop_delay_max_seconds',
    help: 'The longest event-loop delay over the last minute (a synchronous stretch of about this length ran)',
    registers,
    collect() {
      // The second under way counts too (a stall that just ended, before the next reading).
      this.set(Math.max(0, h.max / 1e9, ...maxima));
    },
  });
  new Gauge({
    name: 'gateway_event_loop_delay_p99_seconds',
    help: 'The worst per-second 99th percentile of the event-loop delay over the last minute',
    registers,
    collect() {
      this.set(p99s.length ? Math.max(...p99s) : 0);
    },
  });
  return () => {
    clearWindow = null;
    clearInterval(timer);
    h.disable();
  };
}
