/**
 * A real-sized knowledge upload beside another account's paying work (issue 22):
 * one account uploads the generated 7.8 MB collection (dev/bench/lib/abstracts.ts:
 * 5,183 abstracts as 10 Markdown files) through the operator API while a
 * second account submits an async image task every few seconds. Prints the
 * build time (first upload to the last build ended), pages per second, the
 * knowledge worker's peak RSS, its event-loop delay (the worker's own
 * `*event_loop*max*` series when it exports one, and the slowest answer of its
 * metrics listener, probed every 500 ms), and the second account's task
 * latency (submission to `succeeded` seen by a poll) during the build against
 * its idle latency measured first in the same run.
 *
 *   npm run bench:ingest
 *   BENCH_IDLE_TASKS=8 BENCH_TASK_EVERY_MS=3000 BENCH_DOCS=10 BENCH_TIMEOUT_S=900
 *
 * Starts its own services and processes on free ports (with one worker per
 * queue when workers/queues.ts exists, else the one worker) and stops them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Pool } from 'undici';
import { freePort, stopAll, type Managed } from '../scripts/lib/proc';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { generateCorpus } from './lib/abstracts';

const IDLE_TASKS = Number(process.env.BENCH_IDLE_TASKS ?? 8);
const TASK_EVERY_MS = Number(process.env.BENCH_TASK_EVERY_MS ?? 3000);
const DOCS = Number(process.env.BENCH_DOCS ?? 10);
const TIMEOUT_S = Number(process.env.BENCH_TIMEOUT_S ?? 900);
const POLL_MS = 250;

const files = generateCorpus().slice(0, DOCS);
const bytes = files.reduce((s, f) => s + Buffer.byteLength(f.markdown), 0);
console.log(`corpus: ${files.length} Markdown files, ${files.reduce((s, f) => s + f.abstracts, 0)} abstracts, ${(bytes / 1e6).toFixed(2)} MB`);

const { services, secrets } = await benchServices('ingest');
const simPort = await freePort();
const gwPort = await freePort();
const env: Record<string, string> = { ...services.env, ...secrets, DEPLOYMENT_MODE: 'development', LOG_LEVEL: 'warn', SIMULATOR_URL: `http://127.0.0.1:${simPort}`, TEMPORAL_TASK_QUEUE: 'bench-ingest' };
await startProcess('simulator', 'dev/simulator/server.ts', { ...env, SIMULATOR_PORT: String(simPort) }, simPort);
await runOnce('dev/scripts/seed.ts', env);
const gwMetricsPort = await freePort();
// BENCH_GATEWAY_NODE_ARGS: more node flags for the gateway (for example --cpu-prof --cpu-prof-dir=DIR).
await startProcess('gateway', 'gateway/server.ts', { ...env, PORT: String(gwPort), METRICS_PORT: String(gwMetricsPort) }, gwPort,
  (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean));
/** The gateway's longest event-loop stall of the last minute, ms (its metrics listener). */
async function gatewayLoopMaxMs(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${gwMetricsPort}/metrics`)).text();
  return Number(/^gateway_event_loop_delay_max_seconds(?:\{[^}]*\})?\s+([\d.e+-]+)$/m.exec(text)?.[1] ?? NaN) * 1000;
}
// One worker per queue where the project has them (the knowledge worker is the one measured), else the one worker.
const perQueue = fs.existsSync(path.resolve('workers/queues.ts'));
const queues = perQueue ? ['media', 'knowledge', 'webhooks'] : ['all'];
const workers: Record<string, { proc: Managed; metricsPort: number }> = {};
for (const q of queues) {
  const metricsPort = await freePort();
  // BENCH_CPU_PROF=dir: the measured worker writes a V8 CPU profile there when it stops (node --cpu-prof).
  // BENCH_WORKER_NODE_ARGS: more node flags for the measured worker (for example --trace-gc; its log is .data/bench-logs/worker-knowledge.log).
  const measuredHere = q === 'knowledge' || q === 'all';
  const profile = [
    ...(process.env.BENCH_CPU_PROF && measuredHere ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []),
    ...(process.env.BENCH_WORKER_NODE_ARGS && measuredHere ? process.env.BENCH_WORKER_NODE_ARGS.split(/\s+/).filter(Boolean) : []),
  ];
  const proc = await startProcess(`worker-${q}`, 'workers/main.ts', { ...env, METRICS_PORT: String(metricsPort), ...(perQueue ? { WORKER_QUEUE: q } : {}) }, metricsPort, profile);
  workers[q] = { proc, metricsPort };
}
const measured = workers[perQueue ? 'knowledge' : 'all'];

const http = new Pool(`http://127.0.0.1:${gwPort}`, { connections: 16 });
async function call(method: 'GET' | 'POST', p: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await http.request({ method, path: p, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.body.text();
  return { status: r.statusCode, json: text ? JSON.parse(text) : null };
}
const adminHeaders = { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' };
const admin = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
  const r = await call(method, `/admin/v1${p}`, adminHeaders, body);
  if (r.status >= 300) throw new Error(`${method} ${p} answered ${r.status}: ${JSON.stringify(r.json)}`);
  return r.json;
};
const uploader = await admin('POST', '/accounts', { name: 'bench-uploader' });
const payer = await admin('POST', '/accounts', { name: 'bench-images' });
await admin('POST', `/accounts/${payer.id}/topups`, { amount_usd: '1000' });
const key = (await admin('POST', `/accounts/${payer.id}/keys`, { name: 'bench' })).key as string;
const keyHeaders = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

/** One image task of the second account: submission to `succeeded` seen by a poll, ms. */
async function imageTask(): Promise<{ ms: number; ok: boolean }> {
  const t0 = performance.now();
  const sub = await call('POST', '/v1/images/generations', keyHeaders, { model: 'gpt-image-1', prompt: 'bench', async: true });
  if (sub.status !== 200) return { ms: performance.now() - t0, ok: false };
  for (;;) {
    const r = await call('GET', `/v1/images/generations/${sub.json.id}`, keyHeaders);
    if (r.status !== 202) return { ms: performance.now() - t0, ok: r.status === 200 };
    await new Promise((res) => setTimeout(res, POLL_MS));
  }
}

// The knowledge worker, sampled throughout: RSS from /proc, its metrics listener's answer time, its event-loop series.
const samples = { seconds: { count: 0, under50: 0, under100: 0 }, rssPeak: 0, probeMax: 0, probes: [] as number[], loopMax: 0, loopSeries: '', heapPeak: 0, externalPeak: 0 };
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    try {
      samples.rssPeak = Math.max(samples.rssPeak, rssOf(measured.proc.child.pid!));
    } catch {
      /* exited */
    }
    const t0 = performance.now();
    try {
      const res = await fetch(`http://127.0.0.1:${measured.metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      const ms = performance.now() - t0;
      samples.probes.push(ms);
      samples.probeMax = Math.max(samples.probeMax, ms);
      // The main thread's V8 heap and off-heap buffers (prom-client's defaults): what of the RSS is the event loop's own.
      const heap = /^nodejs_heap_size_total_bytes(?:\{[^}]*\})?\s+([\d.e+]+)$/m.exec(text);
      const external = /^nodejs_external_memory_bytes(?:\{[^}]*\})?\s+([\d.e+]+)$/m.exec(text);
      if (heap) samples.heapPeak = Math.max(samples.heapPeak, Number(heap[1]));
      if (external) samples.externalPeak = Math.max(samples.externalPeak, Number(external[1]));
      // The per-second histogram of the worst stall (the project's own): how many seconds had one over 50 / 100 ms.
      const bucket = (le: string) => Number(new RegExp(`^gateway_event_loop_delay_seconds_bucket\\{[^}]*le="${le}"[^}]*\\}\\s+([\\d.e+]+)$`, 'm').exec(text)?.[1] ?? NaN);
      const count = Number(/^gateway_event_loop_delay_seconds_count(?:\{[^}]*\})?\s+([\d.e+]+)$/m.exec(text)?.[1] ?? NaN);
      if (Number.isFinite(count)) samples.seconds = { count, under50: bucket('0.05'), under100: bucket('0.1') };
      // The project's own max series when it has one, else prom-client's (reset at every scrape: the max between probes).
      for (const m of text.matchAll(/^((?:\w*event_loop_delay_max_seconds|nodejs_eventloop_lag_max_seconds))(?:\{[^}]*\})?\s+([\d.e+-]+)$/gm)) {
        if (!samples.loopSeries || samples.loopSeries === m[1] || m[1] !== 'nodejs_eventloop_lag_max_seconds') {
          samples.loopSeries = m[1];
          samples.loopMax = Math.max(samples.loopMax, Number(m[2]));
        }
      }
    } catch {
      samples.probes.push(10_000);
      samples.probeMax = Math.max(samples.probeMax, 10_000);
    }
    await new Promise((res) => setTimeout(res, 500));
  }
})();

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;
const fmt = (xs: number[]) => `n=${xs.length} p50 ${(pct(xs, 50) / 1000).toFixed(2)} s  p95 ${(pct(xs, 95) / 1000).toFixed(2)} s  max ${(Math.max(...xs) / 1000).toFixed(2)} s`;

// Idle latency: the second account alone, one task every TASK_EVERY_MS.
console.log(`idle: ${IDLE_TASKS} image tasks, one every ${TASK_EVERY_MS} ms...`);
await imageTask(); // warm-up
const idle: number[] = [];
let failed = 0;
await Promise.all(Array.from({ length: IDLE_TASKS }, async (_, i) => {
  await new Promise((res) => setTimeout(res, i * TASK_EVERY_MS));
  const r = await imageTask();
  if (!r.ok) failed++;
  idle.push(r.ms);
}));
const idleRssPeak = samples.rssPeak;
const idleProbeMax = samples.probeMax;
const idleHeapPeak = samples.heapPeak;
samples.rssPeak = 0;
samples.heapPeak = 0;
samples.externalPeak = 0;
samples.probeMax = 0;
samples.loopMax = 0;
samples.probes = [];
const secondsBefore = { ...samples.seconds };

// The upload, with the second account's tasks going on until every build has ended.
console.log(`upload: ${files.length} documents on one account while the other submits an image task every ${TASK_EVERY_MS} ms`);
const t0 = performance.now();
const builds: string[] = [];
for (const f of files) {
  const r = await admin('POST', `/accounts/${uploader.id}/kbs/default/documents`, { filename: f.filename, content: f.markdown });
  builds.push(r.id);
}
const uploadedMs = performance.now() - t0;
let building = true;
const during: number[] = [];
const tasks: Promise<void>[] = [];
const submitter = (async () => {
  while (building) {
    tasks.push(imageTask().then((r) => {
      if (!r.ok) failed++;
      during.push(r.ms);
    }));
    await new Promise((res) => setTimeout(res, TASK_EVERY_MS));
  }
})();
let last = '';
let final: any = null;
for (;;) {
  const list = await admin('GET', `/accounts/${uploader.id}/kbs/default/documents`);
  const p = list.progress;
  const line = `  ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s: ${p.documents_done}/${p.documents_total} documents, ${p.pages_done}/${p.pages_total} pages; worker RSS ${(samples.rssPeak / 1e6).toFixed(0)} MB peak`;
  if (line.replace(/^\s*\d+ s/, '') !== last) console.log(line);
  last = line.replace(/^\s*\d+ s/, '');
  if (p.documents_done === p.documents_total && p.documents_total === files.length) {
    final = list;
    break;
  }
  if (performance.now() - t0 > TIMEOUT_S * 1000) {
    console.log(`not built after ${TIMEOUT_S} s`);
    break;
  }
  await new Promise((res) => setTimeout(res, 2000));
}
const buildMs = performance.now() - t0;
building = false;
await submitter;
await Promise.all(tasks);
sampling = false;
await sampler;

const secondsDuring = {
  count: samples.seconds.count - secondsBefore.count,
  over50: samples.seconds.count - samples.seconds.under50 - (secondsBefore.count - secondsBefore.under50),
  over100: samples.seconds.count - samples.seconds.under100 - (secondsBefore.count - secondsBefore.under100),
};
const states = final ? final.data.map((d: any) => d.latest_build.state) : [];
const pages = final ? final.data.reduce((s: number, d: any) => s + d.page_count, 0) : 0;
const search: number[] = [];
if (final) try {
  // The search endpoint over the built collection: 2-word and 10-word queries drawn from the corpus (first one builds the index).
  const words = files.flatMap((f) => f.markdown.split(/\W+/).filter((w) => w.length > 4)).slice(0, 200_000);
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const q = (n: number) => Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(' ');
  const firstKey = (await admin('POST', `/accounts/${uploader.id}/keys`, { name: 'reader' })).key as string;
  const f0 = performance.now();
  await call('GET', `/api/v1/ext/wiki/search?q=${encodeURIComponent(q(2))}`, { authorization: `Bearer ${firstKey}` });
  const firstMs = performance.now() - f0;
  console.log(`first search after the build (the gateway loads the base and builds its index): ${firstMs.toFixed(0)} ms; the gateway's longest event-loop stall meanwhile (last minute): ${(await gatewayLoopMaxMs()).toFixed(0)} ms`);
  const readerKey = (await admin('POST', `/accounts/${uploader.id}/keys`, { name: 'reader2' })).key as string;
  for (const n of [2, 10]) {
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const s0 = performance.now();
      const r = await call('GET', `/api/v1/ext/wiki/search?q=${encodeURIComponent(q(n))}`, { authorization: `Bearer ${readerKey}` });
      if (r.status !== 200) throw new Error(`search answered ${r.status}: ${JSON.stringify(r.json)}`);
      times.push(performance.now() - s0);
    }
    search.push(pct(times, 95));
    console.log(`search ${n}-word queries over HTTP: p50 ${pct(times, 50).toFixed(1)} ms  p95 ${pct(times, 95).toFixed(1)} ms (n=200)`);
  }
} catch (err) {
  console.log(`search not measured: ${(err as Error).message}`);
}

const idleP95 = pct(idle, 95);
const duringP95 = pct(during, 95);
console.log(`\n== bench:ingest (${new Date().toISOString()}, load average ${(await import('node:os')).loadavg()[0].toFixed(1)} on ${(await import('node:os')).cpus().length} cores; ${perQueue ? 'one worker per queue, the knowledge worker measured' : 'one worker for every queue'})`);
console.log(`build: ${files.length} documents (${(bytes / 1e6).toFixed(2)} MB) -> ${pages} pages in ${(buildMs / 1000).toFixed(1)} s end to end (uploads answered in ${(uploadedMs / 1000).toFixed(1)} s); ${(pages / (buildMs / 1000)).toFixed(0)} pages/s; states: ${JSON.stringify(Object.fromEntries(states.reduce((m: Map<string, number>, s: string) => m.set(s, (m.get(s) ?? 0) + 1), new Map())))}`);
console.log(`worker peak RSS: ${(samples.rssPeak / 1e6).toFixed(0)} MB during the build (${(idleRssPeak / 1e6).toFixed(0)} MB idle); main thread's V8 heap peak ${(samples.heapPeak / 1e6).toFixed(0)} MB (${(idleHeapPeak / 1e6).toFixed(0)} MB idle), off-heap buffers peak ${(samples.externalPeak / 1e6).toFixed(0)} MB`);
console.log(`worker event loop: ${samples.loopSeries ? `${samples.loopSeries} max ${(samples.loopMax * 1000).toFixed(0)} ms` : 'no event-loop series exported'}; metrics listener answered in p50 ${pct(samples.probes, 50).toFixed(0)} ms, max ${samples.probeMax.toFixed(0)} ms over ${samples.probes.length} probes (idle max ${idleProbeMax.toFixed(0)} ms)`);
if (Number.isFinite(secondsDuring.count) && secondsDuring.count > 0) {
  console.log(`worker event loop, per second of the build: ${secondsDuring.over50} of ${secondsDuring.count} seconds had a stall over 50 ms, ${secondsDuring.over100} over 100 ms`);
}
console.log(`second account's image tasks, submission to succeeded: idle ${fmt(idle)}`);
console.log(`                                              during the build ${fmt(during)}`);
console.log(`ratio p95 during/idle: ${(duringP95 / idleP95).toFixed(2)} (limit: 3x idle or 15 s); failed tasks: ${failed}`);
await http.close();
await stopAll();
await services.stop();
process.exit(final && failed === 0 ? 0 : 1);
