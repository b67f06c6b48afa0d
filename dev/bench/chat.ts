/**
 * Chat through the gateway vs straight to the upstream simulator, measured in
 * the same run: requests/s and p50/p99 latency for non-streaming
 * chat-completions and for streams (time to first token), at 1 and at 64
 * concurrent clients; the added latency per sequential request; the peak RSS
 * of the gateway holding 2,000 open streams. The gateway and the simulator
 * are separate processes; the account has rate limits on (high enough never
 * to refuse; BENCH_LIMITS=0 for none), so auth, limits and billing all run on every request.
 *   npx tsx dev/bench/chat.ts      (starts its own services on free ports)
 * The gateway runs as production runs it, compiled (dev/scripts/build.ts, dist/gateway.mjs);
 * BENCH_TSX=1 runs its TypeScript through tsx instead (as dev and tests do).
 * CPU per request is the gateway's own and, alongside, its stores' (Redis, FerretDB) over the same load.
 * Env: BENCH_SECONDS (8), BENCH_STREAMS (2000), BENCH_STREAM_TOKENS (20) and BENCH_STREAM_DELAY_MS (1000): each open stream's
 * length and pace (a long answer: 300 and 100), BENCH_TSX=1, BENCH_CPU_PROF=1 (gateway --cpu-prof into .data/bench-prof/),
 * BENCH_LIMITS=0 (the account without rate limits, the spec's default; on by default, high enough never to refuse),
 * BENCH_GC=0 (no --trace-gc-nvp: the garbage collection per request by phase is printed last otherwise),
 * BENCH_NODE_FLAGS (extra node flags for the gateway), BENCH_LOG_LEVEL (the gateway's; default info, as production's default,
 * so its access log line per request is part of what is measured; the lines go to .data/bench-logs/gateway.log).
 * The summary at the end puts the gateway against the bare Koa relay of the same run (issue 25's targets).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { freePort, spawnManaged, stopAll, waitForPort, type Managed } from '../scripts/lib/proc';
import { buildAll, gatewayNodeFlags } from '../scripts/build';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { pidOfPort } from './lib/cpu';
import { counters, delta } from './lib/metrics';
import { Redis } from 'ioredis';
import { fmt, runLoad, type LoadResult } from './lib/load';
import type { Phase } from './lib/profile-summary';
import { describeGc, gcOfPhase, GC_TRACE_FLAG, readGcLines } from './lib/gc-log';
import { DEFAULT_OUTPUT_TOKENS } from '../simulator/text';

const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 8) * 1000;
const SEQ_MS = Math.max(3000, DURATION_MS / 2);
const OPEN_STREAMS = Number(process.env.BENCH_STREAMS ?? 2000);
const STREAM_TOKENS = Number(process.env.BENCH_STREAM_TOKENS ?? 20);
const STREAM_DELAY_MS = Number(process.env.BENCH_STREAM_DELAY_MS ?? 1000);
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const TSX = process.env.BENCH_TSX === '1';
/** Extra node flags for the gateway (V8 heap trials, e.g. --max-semi-space-size=4). */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);

const { services, secrets, metricsPorts } = await benchServices('chat', { metrics: true });
const simPort = await freePort();
await startProcess('simulator', 'dev/simulator/server.ts', { SIMULATOR_PORT: String(simPort) }, simPort);
const simUrl = `http://127.0.0.1:${simPort}`;
const env = { ...services.env, ...secrets, LOG_LEVEL: 'warn', SIMULATOR_URL: simUrl };
const gatewayEnv = { ...env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' };
await runOnce('dev/scripts/seed.ts', env);
const gwPort = await freePort();
const profDir = path.resolve('.data/bench-prof');
// V8's line per collection (dev/bench/lib/gc-log.ts), read back from the gateway's log after the run.
const GC_TRACE = process.env.BENCH_GC !== '0';
const gatewayLog = path.resolve('.data/bench-logs/gateway.log');
const gcLogFrom = fs.existsSync(gatewayLog) ? fs.statSync(gatewayLog).size : 0;
const profArgs = [...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), ...(GC_TRACE ? [GC_TRACE_FLAG] : []), ...NODE_FLAGS];
let gatewaySpawnedAtUs = 0;
let gateway: Managed;
if (TSX) {
  gatewaySpawnedAtUs = Number(process.hrtime.bigint() / 1000n);
  gateway = await startProcess('gateway', 'gateway/server.ts', { ...gatewayEnv, PORT: String(gwPort) }, gwPort, profArgs);
} else {
  await buildAll();
  gatewaySpawnedAtUs = Number(process.hrtime.bigint() / 1000n);
  gateway = spawnManaged({
    name: 'gateway', cmd: process.execPath, args: [...gatewayNodeFlags(), ...profArgs, 'dist/gateway.mjs'],
    env: { ...process.env, ...gatewayEnv, PORT: String(gwPort) }, logFile: gatewayLog,
  });
  await waitForPort(gwPort, gateway, 120_000);
}
const gwUrl = `http://127.0.0.1:${gwPort}`;
// Ready as a load balancer (or a harness) would ask: /readyz calls Temporal, which once turned async
// hooks on for the process on Node 20 (round 21); measuring after it keeps that in view.
const ready = await fetch(`${gwUrl}/readyz`);
if (ready.status !== 200) throw new Error(`the gateway is not ready: ${ready.status} ${await ready.text()}`);
// The least a proxy hop costs on this machine (dev/bench/servers/bare-proxy.ts): what the gateway adds over it is its own.
const bareProxyPort = await freePort();
await startProcess('bare-proxy', 'dev/bench/servers/bare-proxy.ts', { UPSTREAM: `${simUrl}/ch/openai-a`, PORT: String(bareProxyPort) }, bareProxyPort);

const admin = async (method: string, p: string, body: unknown) => {
  const r = await fetch(`${gwUrl}/admin/v1${p}`, { method, headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return (await r.json()) as any;
};
const account = await admin('POST', '/accounts', { name: 'bench' });
const key = (await admin('POST', `/accounts/${account.id}/keys`, { name: 'bench' })).key as string;
await admin('POST', `/accounts/${account.id}/topups`, { amount_usd: '1000000' });
// Limits on, high enough never to refuse: the Lua limiter runs on every request (BENCH_LIMITS=0: the spec's default, none).
if (process.env.BENCH_LIMITS !== '0') await admin('PATCH', `/accounts/${account.id}`, { rate_limit: { rpm: 100_000_000, concurrency: 100_000 } });
const simControl = (p: string, body: unknown) => fetch(`${simUrl}/_control${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const message = [{ role: 'user', content: 'Hello, benchmark: say something short.' }];
const jsonBody = JSON.stringify({ model: 'gpt-5.1', messages: message, max_tokens: 16 });
const streamBody = JSON.stringify({ model: 'gpt-5.1', messages: message, max_tokens: 16, stream: true, stream_options: { include_usage: true } });
const direct = { url: `${simUrl}/ch/openai-a/v1/chat/completions`, headers: { authorization: 'Bearer upstream', 'content-type': 'application/json' } };
const through = { url: `${gwUrl}/v1/chat/completions`, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } };
const bare = { url: `http://127.0.0.1:${bareProxyPort}/v1/chat/completions`, headers: { 'content-type': 'application/json' } };

function status(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(\w+):\s+(.*)$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}
const mb = (kb: string) => `${(parseInt(kb, 10) / 1024).toFixed(1)} MB`;
const pid = gateway.child.pid!;
/** The process listening on a local port (the stores: their CPU per request is part of the call's cost). */
const stores = { redis: pidOfPort(services.env.REDIS_URL), ferretdb: pidOfPort(services.env.MONGO_URL) };

// ---------------------------------------------------------------- warm-up
const startedAt = performance.now();
await new Promise((r) => setTimeout(r, 2000));
const fresh = status(pid);
// Idle once start-up has settled: V8's memory reducer gives the start-up garbage back some seconds after start
// (about 15 s here: 151 -> 118 MB), which the figure 2 s after start still holds.
await new Promise((r) => setTimeout(r, Math.max(0, 20_000 - (performance.now() - startedAt))));
const settled = status(pid);
console.log(`warming up (gateway pid ${pid}, ${TSX ? 'tsx' : 'compiled'})...`);
for (const target of [direct, through]) {
  await runLoad({ ...target, method: 'POST', body: jsonBody, connections: 64, durationMs: 2000 });
  await runLoad({ ...target, method: 'POST', body: streamBody, connections: 64, durationMs: 1000, firstChunk: true });
}

// ---------------------------------------------------------------- 2,000 open streams, peak RSS
// First, while the process is young: VmHWM is the peak since start. Streams of 20 tokens, one per second (by default).
const idle = status(pid);
await simControl('/latency', { ttft_ms: 0, token_delay_ms: STREAM_DELAY_MS });
// The simulator answers DEFAULT_OUTPUT_TOKENS unless told otherwise; max_tokens caps the answer at STREAM_TOKENS.
if (STREAM_TOKENS > DEFAULT_OUTPUT_TOKENS) await simControl('/output', { tokens: STREAM_TOKENS });
const openBody = JSON.stringify({ model: 'gpt-5.1', messages: message, max_tokens: STREAM_TOKENS, stream: true });

interface OpenStreams { allFirstMs: number; firstBytes: number; completed: number; failed: number; reasons: Map<string, number>; firstP50Ms: number }
/**
 * OPEN_STREAMS streams opened at once on their own connections, each held until its STREAM_TOKENS tokens are in.
 * Run against the simulator directly first, then through the gateway: the direct figure is what the
 * load generator and the simulator (on the same cores) manage without any gateway in between.
 */
async function openStreams(target: { url: string; headers: Record<string, string> }, during?: () => void): Promise<OpenStreams> {
  const agent = new Agent({ connections: OPEN_STREAMS + 10, pipelining: 1, keepAliveTimeout: 30_000 });
  const r: OpenStreams = { allFirstMs: 0, firstBytes: 0, completed: 0, failed: 0, reasons: new Map(), firstP50Ms: 0 };
  const firsts: number[] = [];
  const fail = (why: string) => {
    r.failed++;
    r.reasons.set(why, (r.reasons.get(why) ?? 0) + 1);
  };
  const opened = performance.now();
  const streams = Array.from({ length: OPEN_STREAMS }, async () => {
    try {
      const res = await request(target.url, { method: 'POST', headers: target.headers, body: openBody, dispatcher: agent });
      let seen = false;
      for await (const _ of res.body) {
        if (!seen) {
          seen = true;
          firsts.push(performance.now() - opened);
          if (++r.firstBytes === OPEN_STREAMS) r.allFirstMs = performance.now() - opened;
        }
      }
      if (res.statusCode === 200) r.completed++;
      else fail(`HTTP ${res.statusCode}`);
    } catch (err) {
      fail((err as { code?: string }).code ?? (err as Error).message);
    }
  });
  const sampler = during ? setInterval(during, 250) : undefined;
  await Promise.race([Promise.all(streams), new Promise((res) => setTimeout(res, 120_000 + STREAM_TOKENS * STREAM_DELAY_MS))]);
  if (sampler) clearInterval(sampler);
  await agent.close();
  firsts.sort((a, b) => a - b);
  r.firstP50Ms = firsts[Math.floor(firsts.length / 2)] ?? 0;
  return r;
}
const describe = (r: OpenStreams) =>
  `first byte on all streams after ${r.allFirstMs ? (r.allFirstMs / 1000).toFixed(2) + ' s' : `never (${r.firstBytes} of ${OPEN_STREAMS})`} (p50 ${(r.firstP50Ms / 1000).toFixed(2)} s); ` +
  `completed ${r.completed}, failed ${r.failed}${r.failed ? ` (${[...r.reasons].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}`;
const openDirect = await openStreams(direct);
let sample = status(pid);
const openStartUs = Number(process.hrtime.bigint() / 1000n);
const openThrough = await openStreams(through, () => {
  sample = status(pid);
});
const openEndUs = Number(process.hrtime.bigint() / 1000n);
const afterStreams = status(pid);
await simControl('/latency', { ttft_ms: 0, token_delay_ms: 0 });
if (STREAM_TOKENS > DEFAULT_OUTPUT_TOKENS) await simControl('/output', { tokens: DEFAULT_OUTPUT_TOKENS });
const streamReport = [
  `${OPEN_STREAMS} concurrent streams (${STREAM_TOKENS} tokens, one every ${STREAM_DELAY_MS} ms), opened at once:`,
  `  direct to the simulator: ${describe(openDirect)}`,
  `  through the gateway:     ${describe(openThrough)}`,
  `  gateway RSS ${mb(fresh.VmRSS)} 2 s after start, ${mb(idle.VmRSS)} after warm-up, during ${mb(sample.VmRSS)}, peak (VmHWM) ${mb(afterStreams.VmHWM)}`,
];

// ---------------------------------------------------------------- throughput and latency
const rows: [string, LoadResult, LoadResult, LoadResult][] = [];
/** The gateway's load phases, in CLOCK_MONOTONIC microseconds (V8's profile clock): dev/bench/lib/profile-summary.ts cuts the profile by them. */
const phases: Phase[] = [{ label: `${OPEN_STREAMS} open streams`, startUs: openStartUs, endUs: openEndUs, requests: OPEN_STREAMS }];
const monoUs = () => Number(process.hrtime.bigint() / 1000n);
const cpuPerRequest: string[] = [];
/** CPU per request in ms at each phase: the gateway's, Redis's, FerretDB's. */
const cpuOf = new Map<string, { gateway: number; redis: number; ferretdb: number }>();
const redisStats = new Redis(services.env.REDIS_URL, { lazyConnect: false });
/** Operations the stores served so far, by command (Redis INFO commandstats; FerretDB's debug metrics). */
async function storeOps(): Promise<{ redis: Map<string, number>; mongo: Map<string, number> }> {
  const info = await redisStats.info('commandstats');
  const redis = new Map<string, number>();
  for (const m of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) if (m[1] !== 'info') redis.set(m[1], Number(m[2]));
  const mongo = await counters(`http://127.0.0.1:${metricsPorts!.ferretdb}/debug/metrics`, 'ferretdb_client_requests_total', 'command');
  return { redis, mongo };
}
const opsLine = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ') || 'none';
/** utime + stime of the gateway, in clock ticks (100 per second). */
const cpuTicks = (p: number) => {
  const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
};
for (const [label, body, firstChunk] of [['non-streaming', jsonBody, false], ['streaming (TTFT)', streamBody, true]] as const) {
  for (const connections of [1, 64]) {
    const ms = connections === 1 ? SEQ_MS : DURATION_MS;
    const d = await runLoad({ ...direct, method: 'POST', body, connections, durationMs: ms, firstChunk });
    const before = cpuTicks(pid);
    const storesBefore = Object.entries(stores).map(([name, p]) => [name, p, p ? cpuTicks(p) : 0] as const);
    const ops0 = await storeOps();
    const startUs = monoUs();
    const g = await runLoad({ ...through, method: 'POST', body, connections, durationMs: ms, firstChunk });
    phases.push({ label: `${label}, ${connections} client${connections > 1 ? 's' : ''}`, startUs, endUs: monoUs(), requests: g.requests });
    const perReq = (ticks: number) => ((ticks * 10) / g.requests).toFixed(3);
    const storeTicks = storesBefore.filter(([, p]) => p).map(([name, p, t]) => [name, cpuTicks(p!) - t] as const);
    const gatewayTicks = cpuTicks(pid) - before;
    const storeCpu = storeTicks.map(([name, t]) => `${name} ${perReq(t)}`).join(', ');
    cpuPerRequest.push(`${label}, ${connections} client${connections > 1 ? 's' : ''}: ${perReq(gatewayTicks)} ms (stores: ${storeCpu || 'n/a'})`);
    const ms1 = (ticks: number) => (ticks * 10) / g.requests;
    cpuOf.set(`${label}, ${connections}`, { gateway: ms1(gatewayTicks), redis: ms1(storeTicks.find(([n]) => n === 'redis')?.[1] ?? 0), ferretdb: ms1(storeTicks.find(([n]) => n === 'ferretdb')?.[1] ?? 0) });
    // The drain runs behind the answers: let it catch up before counting the store's operations.
    await new Promise((r) => setTimeout(r, 1500));
    const ops1 = await storeOps();
    cpuPerRequest.push(`    per request: Redis ${opsLine(delta(ops0.redis, ops1.redis, g.requests))}; FerretDB ${opsLine(delta(ops0.mongo, ops1.mongo, g.requests))}`);
    const b = await runLoad({ ...bare, method: 'POST', body, connections, durationMs: ms, firstChunk });
    rows.push([`${label}, ${connections} client${connections > 1 ? 's' : ''}`, d, g, b]);
  }
}

console.log('');
for (const [label, d, g, b] of rows) {
  console.log(label);
  console.log(`  direct      ${fmt(d)}`);
  console.log(`  gateway     ${fmt(g)}`);
  console.log(`  bare proxy  ${fmt(b)}`);
  console.log(`  ratio gateway/direct ${(g.rps / d.rps).toFixed(2)}   added p50 ${(g.p50ms - d.p50ms).toFixed(3)} ms   ` +
    `(bare proxy: ratio ${(b.rps / d.rps).toFixed(2)}, added p50 ${(b.p50ms - d.p50ms).toFixed(3)} ms)`);
}
const end = status(pid);
console.log('');
for (const line of streamReport) console.log(line);
console.log(`  RSS idle once start-up settled (20 s after start): ${mb(settled.VmRSS)}; peak over the whole run (VmHWM): ${mb(end.VmHWM)}`);
const allFirstS = openThrough.allFirstMs ? openThrough.allFirstMs / 1000 : Infinity;
console.log(`  every stream's first byte through the gateway within 1 s: ${allFirstS <= 1 ? 'yes' : `no (${Number.isFinite(allFirstS) ? `${allFirstS.toFixed(2)} s` : 'not all'}; direct: ${(openDirect.allFirstMs / 1000).toFixed(2)} s)`}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('');
console.log('gateway CPU per request (and of its stores, Redis and FerretDB, while the gateway ran):');
for (const line of cpuPerRequest) console.log(`  ${line}`);

// Issue 25: the gateway against the bare Koa relay measured in the same run.
const [seq, par, seqStream, parStream] = rows;
const ownP50 = (r: (typeof rows)[number]) => r[2].p50ms - r[3].p50ms;
const addedP99 = (r: (typeof rows)[number], i: 2 | 3) => r[i].p99ms - r[1].p99ms;
const calls = (key: string) => {
  const c = cpuOf.get(key)!;
  return c.gateway + c.redis + c.ferretdb;
};
const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
const ratio = par[2].rps / par[3].rps;
const ratioStream = parStream[2].rps / parStream[3].rps;
const rssIdle = parseInt(settled.VmRSS, 10) / 1024;
const rssPeak = parseInt(end.VmHWM, 10) / 1024;
console.log('');
console.log('against the bare Koa relay of this run (issue 25):');
console.log(`  throughput at 64 clients, gateway / relay: non-streaming ${ratio.toFixed(2)}, streaming ${ratioStream.toFixed(2)} (target >= 0.5: ${mark(ratio >= 0.5 && ratioStream >= 0.5)})`);
console.log(`  own added p50, sequential: ${ownP50(seq).toFixed(3)} ms; own added first byte p50: ${ownP50(seqStream).toFixed(3)} ms (target < 0.25: ${mark(ownP50(seq) < 0.25 && ownP50(seqStream) < 0.25)})`);
console.log(`  added p99 over direct, sequential: gateway ${addedP99(seq, 2).toFixed(2)} ms, relay ${addedP99(seq, 3).toFixed(2)} ms (target: gateway < 1 ms: ${mark(addedP99(seq, 2) < 1)})`);
console.log(`  CPU per call with its stores at 64 clients: non-streaming ${calls('non-streaming, 64').toFixed(3)} ms, streaming ${calls('streaming (TTFT), 64').toFixed(3)} ms (target <= 0.25: ${mark(calls('non-streaming, 64') <= 0.25)})`);
console.log(`  RSS: idle ${rssIdle.toFixed(0)} MB (target < 130: ${mark(rssIdle < 130)}), peak over the run ${rssPeak.toFixed(0)} MB with ${OPEN_STREAMS} open streams among it (target < 250: ${mark(rssPeak < 250)})`);
if (CPU_PROF) {
  fs.mkdirSync(profDir, { recursive: true });
  fs.writeFileSync(path.join(profDir, 'phases.json'), JSON.stringify(phases));
  console.log(`cpu profile of the gateway: ${profDir} (written on exit); per request by phase: npx tsx dev/bench/lib/profile-summary.ts ${profDir}`);
}

redisStats.disconnect();
await stopAll();
await services.stop();
if (GC_TRACE) {
  // Read once the gateway has exited: V8 writes these lines through stdio's buffer, flushed at exit.
  const lines = readGcLines(gatewayLog, gcLogFrom);
  console.log('');
  console.log(`gateway garbage collection per request (${GC_TRACE_FLAG}; BENCH_GC=0 leaves it out):`);
  for (const phase of phases) console.log(`  ${describeGc(phase.label, gcOfPhase(lines, phase, gatewaySpawnedAtUs))}`);
}
process.exit(0);
