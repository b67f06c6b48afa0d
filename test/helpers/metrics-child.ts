// A process whose main loop the test holds: its worker-style metrics listener (own thread) and the
// event-loop series. Prints `url <url>`, then on each `block <ms>` line holds its loop that long,
// printing `blocking` before and `unblocked` after (test/workers/metrics-thread.test.ts).
import readline from 'node:readline';
import { Registry } from 'prom-client';
import { defineMetrics } from '../../platform/metrics/registry';
import { watchEventLoop } from '../../platform/metrics/event-loop';
import { serveMetricsOffThread } from '../../platform/metrics/thread-server';
import { createLogger } from '../../platform/logger';

const m = defineMetrics(new Registry(), 'worker');
watchEventLoop(m);
const { url } = await serveMetricsOffThread(m.registry, 0, '127.0.0.1', createLogger('silent'));
console.log(`url ${url}`);
for await (const line of readline.createInterface({ input: process.stdin })) {
  const [cmd, arg] = line.split(' ');
  if (cmd !== 'block') continue;
  console.log('blocking');
  const until = Date.now() + Number(arg);
  while (Date.now() < until) {
    // a synchronous stretch, as a CPU-heavy step on the worker's loop
  }
  console.log('unblocked');
}
