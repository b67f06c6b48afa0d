/**
 * Chat through the gateway vs straight to the upstream simulator, measured in
 * the same run: requests/s and p50/p99 latency for non-streaming
 * chat-completions and for streams (time to first token), at 1 and at 64
 * concurrent clients; the added latency per sequential request; the peak RSS
 * of the gateway holding 2,000 open streams. The gateway and the simulator
 * are separate processes; the account has rate limits on (high enough never
 * to refuse), so auth, limits and billing all run on every request.
 *   npx tsx bench/chat.ts      (starts its own services on free ports)
 * The gateway runs as production runs it, compiled (scripts/build.ts, dist/gateway.mjs);
 * BENCH_TSX=1 runs its TypeScript through tsx instead (as dev and tests do).
 * Env: BENCH_SECONDS (8), BENCH_STREAMS (2000), BENCH_TSX=1, BENCH_CPU_PROF=1 (gateway --cpu-prof into .data/bench-prof/).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { freePort, spawnManaged, stopAll, waitForPort, type Managed } from '../scripts/lib/proc';
import { buildAll } from '../scripts/build';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { fmt, runLoad, type LoadResult } from './lib/load';

const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 8) * 1000;
const SEQ_MS = Math.max(3000, DURATION_MS / 2);
const OPEN_STREAMS = Number(process.env.BENCH_STREAMS ?? 2000);
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const TSX = process.env.BENCH_TSX === '1';

const { services, secrets } = await benchServices('chat');
const simPort = await freePort();
await startProcess('simulator', 'simulator/server.ts', { SIMULATOR_PORT: String(simPort) }, simPort);
const simUrl = `http://127.0.0.1:${simPort}`;
const env = { ...services.env, ...secrets, LOG_LEVEL: 'warn', SIMULATOR_URL: simUrl };
await runOnce('scripts/seed.ts', env);
const gwPort = await freePort();
const profDir = path.resolve('.data/bench-prof');
const profArgs = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
let gateway: Managed;
if (TSX) gateway = await startProcess('gateway', 'gateway/server.ts', { ...env, PORT: String(gwPort) }, gwPort, profArgs);
else {
  await buildAll();
  gateway = spawnManaged({
    name: 'gateway', cmd: process.execPath, args: [...profArgs, 'dist/gateway.mjs'],
    env: { ...process.env, ...env, PORT: String(gwPort) }, logFile: path.resolve('.data/bench-logs/gateway.log'),
  });
  await waitForPort(gwPort, gateway, 120_000);
}
const gwUrl = `http://127.0.0.1:${gwPort}`;

const admin = async (method: string, p: string, body: unknown) => {
  const r = await fetch(`${gwUrl}/admin/v1${p}`, { method, headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return (await r.json()) as any;
};
const account = await admin('POST', '/accounts', { name: 'bench' });
const key = (await admin('POST', `/accounts/${account.id}/keys`, { name: 'bench' })).key as string;
await admin('POST', `/accounts/${account.id}/topups`, { amount_usd: '1000000' });
// Limits on, high enough never to refuse: the Lua limiter runs on every request.
await admin('PATCH', `/accounts/${account.id}`, { rate_limit: { rpm: 100_000_000, concurrency: 100_000 } });
const simControl = (p: string, body: unknown) => fetch(`${simUrl}/_control${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const message = [{ role: 'user', content: 'Hello, benchmark: say something short.' }];
const jsonBody = JSON.stringify({ model: 'gpt-5.1', messages: message, max_tokens: 16 });
const streamBody = JSON.stringify({ model: 'gpt-5.1', messages: message, max_tokens: 16, stream: true, stream_options: { include_usage: true } });
const direct = { url: `${simUrl}/ch/openai-a/v1/chat/completions`, headers: { authorization: 'Bearer upstream', 'content-type': 'application/json' } };
const through = { url: `${gwUrl}/v1/chat/completions`, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } };

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

// ---------------------------------------------------------------- warm-up
await new Promise((r) => setTimeout(r, 2000));
const fresh = status(pid);
console.log(`warming up (gateway pid ${pid}, ${TSX ? 'tsx' : 'compiled'})...`);
for (const target of [direct, through]) {
  await runLoad({ ...target, method: 'POST', body: jsonBody, connections: 64, durationMs: 2000 });
  await runLoad({ ...target, method: 'POST', body: streamBody, connections: 64, durationMs: 1000, firstChunk: true });
}

// ---------------------------------------------------------------- 2,000 open streams, peak RSS
// First, while the process is young: VmHWM is the peak since start. Streams of 20 tokens, one per second.
const idle = status(pid);
await simControl('/latency', { ttft_ms: 0, token_delay_ms: 1000 });
const agent = new Agent({ connections: OPEN_STREAMS + 10, pipelining: 1, keepAliveTimeout: 30_000 });
const openBody = JSON.stringify({ model: 'gpt-5.1', messages: message, max_tokens: 20, stream: true });
let firstBytes = 0;
let completed = 0;
let failed = 0;
const reasons = new Map<string, number>();
const fail = (why: string) => {
  failed++;
  reasons.set(why, (reasons.get(why) ?? 0) + 1);
};
const opened = performance.now();
let allFirst = 0;
const streams = Array.from({ length: OPEN_STREAMS }, async () => {
  try {
    const res = await request(through.url, { method: 'POST', headers: through.headers, body: openBody, dispatcher: agent });
    let seen = false;
    for await (const _ of res.body) {
      if (!seen) {
        seen = true;
        if (++firstBytes === OPEN_STREAMS) allFirst = performance.now() - opened;
      }
    }
    if (res.statusCode === 200) completed++;
    else fail(`HTTP ${res.statusCode}`);
  } catch (err) {
    fail((err as { code?: string }).code ?? (err as Error).message);
  }
});
let peakOpen = 0;
let sample = status(pid);
const sampler = setInterval(() => {
  sample = status(pid);
  peakOpen = Math.max(peakOpen, firstBytes);
}, 250);
await Promise.race([Promise.all(streams), new Promise((r) => setTimeout(r, 120_000))]);
clearInterval(sampler);
const afterStreams = status(pid);
await agent.close();
await simControl('/latency', { ttft_ms: 0, token_delay_ms: 0 });
const streamReport = [
  `${OPEN_STREAMS} concurrent streams (20 tokens at 1/s each) through the gateway:`,
  `  first byte on all streams after ${allFirst ? (allFirst / 1000).toFixed(2) + ' s' : `never (${firstBytes} of ${OPEN_STREAMS})`}; completed ${completed}, failed ${failed}${failed ? ` (${[...reasons].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}`,
  `  gateway RSS idle ${mb(fresh.VmRSS)} (after start), ${mb(idle.VmRSS)} (after warm-up), during ${mb(sample.VmRSS)}, peak (VmHWM) ${mb(afterStreams.VmHWM)}`,
];

// ---------------------------------------------------------------- throughput and latency
const rows: [string, LoadResult, LoadResult][] = [];
const cpuPerRequest: string[] = [];
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
    const g = await runLoad({ ...through, method: 'POST', body, connections, durationMs: ms, firstChunk });
    cpuPerRequest.push(`${label}, ${connections} client${connections > 1 ? 's' : ''}: ${(((cpuTicks(pid) - before) * 10) / g.requests).toFixed(3)} ms`);
    rows.push([`${label}, ${connections} client${connections > 1 ? 's' : ''}`, d, g]);
  }
}

console.log('');
for (const [label, d, g] of rows) {
  console.log(label);
  console.log(`  direct   ${fmt(d)}`);
  console.log(`  gateway  ${fmt(g)}`);
  console.log(`  ratio gateway/direct ${(g.rps / d.rps).toFixed(2)}   added p50 ${(g.p50ms - d.p50ms).toFixed(3)} ms`);
}
const seq = rows[0];
const par = rows[1];
console.log('');
console.log(`added latency p50, sequential non-streaming: ${(seq[2].p50ms - seq[1].p50ms).toFixed(3)} ms (target < 0.4 ms)`);
console.log(`added time to first byte p50, sequential streaming: ${(rows[2][2].p50ms - rows[2][1].p50ms).toFixed(3)} ms (target < 0.5 ms)`);
console.log(`throughput ratio at 64 clients, non-streaming: ${(par[2].rps / par[1].rps).toFixed(2)} (target >= 0.25)`);
console.log(`throughput ratio at 64 clients, streaming: ${(rows[3][2].rps / rows[3][1].rps).toFixed(2)}`);
console.log(`gateway CPU per request: ${cpuPerRequest.join('; ')}`);
console.log('');
for (const line of streamReport) console.log(line);
console.log(`  targets: idle under 150 MB, peak under 250 MB, every first byte within 1 s; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
if (CPU_PROF) console.log(`cpu profile of the gateway: ${profDir} (written on exit)`);

await stopAll();
await services.stop();
process.exit(0);
