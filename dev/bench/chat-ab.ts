/**
 * Two builds of the gateway against one stack, measured in interleaved
 * rounds: the fairest before/after on a machine whose speed drifts from
 * minute to minute (a whole `bench:chat` run of main and then of a branch can
 * differ by 2x on the same code). Both gateways share Redis, FerretDB and
 * the simulator; each round measures direct, A and B (the order alternates)
 * on the same three loads: sequential non-streaming, sequential streaming
 * time to first byte, 64 clients non-streaming; and the CPU per request of
 * each gateway. Prints the median of the rounds and B's figures over A's.
 *   BENCH_A=/path/to/other/worktree npm run bench:chat-ab
 * A is the gateway built in BENCH_A (dev/scripts/build.ts there, run from there);
 * B is this worktree's. Each runs with its own worktree's gateway/node-flags. BENCH_A_FLAGS / BENCH_B_FLAGS: more node flags for each
 * (heap trials such as --max-semi-space-size=2; none by default, as `npm start`).
 * Env: BENCH_LOG_LEVEL (the gateways'; default info, production's default), BENCH_ROUNDS (5), BENCH_SECONDS (3, per load), BENCH_PAIRED (3000: sequential requests per
 * target in the paired phase, which rotates direct, a bare proxy, A and B request by request; 0 skips it).
 * Both gateways drain the shared settlement journal, so each may pay for some
 * of the other's batches: read a difference under about 25 % in CPU or
 * throughput as noise (two runs of the same non-streaming code differed so).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, spawnManaged, stopAll, waitForPort } from '../scripts/lib/proc';
import { buildAll, gatewayNodeFlags } from '../scripts/build';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { runLoad } from './lib/load';
import { Pool } from 'undici';

const A_DIR = process.env.BENCH_A;
if (!A_DIR) throw new Error('BENCH_A: the worktree of the "before" build');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MS = Number(process.env.BENCH_SECONDS ?? 3) * 1000;
const flags = (v: string | undefined) => (v ?? '').split(' ').filter(Boolean);

const { services, secrets } = await benchServices('chat-ab');
const simPort = await freePort();
await startProcess('simulator', 'dev/simulator/server.ts', { SIMULATOR_PORT: String(simPort) }, simPort);
const simUrl = `http://127.0.0.1:${simPort}`;
const env = { ...services.env, ...secrets, LOG_LEVEL: 'warn', SIMULATOR_URL: simUrl };
await runOnce('dev/scripts/seed.ts', env);
await buildAll();
execFileSync(process.execPath, ['--import', 'tsx', 'dev/scripts/build.ts'], { cwd: A_DIR, stdio: 'inherit' });

async function gateway(name: string, dir: string, nodeFlags: string[]) {
  const port = await freePort();
  const g = spawnManaged({
    name, cmd: process.execPath, args: [...gatewayNodeFlags(dir), ...nodeFlags, path.join(dir, 'dist/gateway.mjs')], cwd: dir,
    env: { ...process.env, ...env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', PORT: String(port) }, logFile: path.resolve(`.data/bench-logs/${name}.log`),
  });
  await waitForPort(port, g, 120_000);
  return { name, url: `http://127.0.0.1:${port}`, pid: g.child.pid! };
}
const A = await gateway('gateway-a', path.resolve(A_DIR), flags(process.env.BENCH_A_FLAGS));
// The least a proxy hop costs here (dev/bench/servers/bare-proxy.ts), for the paired figures below.
const bareProxyPort = await freePort();
await startProcess('bare-proxy', 'dev/bench/servers/bare-proxy.ts', { UPSTREAM: `${simUrl}/ch/openai-a`, PORT: String(bareProxyPort) }, bareProxyPort);
const B = await gateway('gateway-b', process.cwd(), flags(process.env.BENCH_B_FLAGS));

const admin = async (method: string, p: string, body: unknown) => {
  const r = await fetch(`${B.url}/admin/v1${p}`, { method, headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return (await r.json()) as any;
};
const account = await admin('POST', '/accounts', { name: 'bench-ab' });
const key = (await admin('POST', `/accounts/${account.id}/keys`, { name: 'bench' })).key as string;
await admin('POST', `/accounts/${account.id}/topups`, { amount_usd: '1000000' });
await admin('PATCH', `/accounts/${account.id}`, { rate_limit: { rpm: 100_000_000, concurrency: 100_000 } });

const message = [{ role: 'user', content: 'Hello, benchmark: say something short.' }];
const jsonBody = JSON.stringify({ model: 'gpt-5.1', messages: message, max_tokens: 16 });
const streamBody = JSON.stringify({ model: 'gpt-5.1', messages: message, max_tokens: 16, stream: true, stream_options: { include_usage: true } });
const headersOf = (url: string) => (url === simUrl ? { authorization: 'Bearer upstream', 'content-type': 'application/json' } : { authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const urlOf = (base: string) => (base === simUrl ? `${simUrl}/ch/openai-a/v1/chat/completions` : `${base}/v1/chat/completions`);
const ticks = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
};
const status = (pid: number, field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
/** Resident now, and the peak since start (VmHWM). */
const rss = (pid: number) => `${status(pid, 'VmRSS').toFixed(1)} MB (peak ${status(pid, 'VmHWM').toFixed(1)} MB)`;

interface Fig { seq: number; ttfb: number; rps64: number; cpuSeq: number; cpuTtfb: number; cpu64: number }
async function measure(base: string, pid?: number): Promise<Fig> {
  const load = async (body: string, connections: number, firstChunk: boolean) => {
    const t0 = pid ? ticks(pid) : 0;
    const r = await runLoad({ url: urlOf(base), method: 'POST', headers: headersOf(base), body, connections, durationMs: MS, firstChunk });
    if (r.errors) console.log(`  ${base}: ${r.errors} errors`);
    return { r, cpu: pid ? ((ticks(pid) - t0) * 10) / r.requests : 0 };
  };
  const seq = await load(jsonBody, 1, false);
  const ttfb = await load(streamBody, 1, true);
  const par = await load(jsonBody, 64, false);
  return { seq: seq.r.p50ms, ttfb: ttfb.r.p50ms, rps64: par.r.rps, cpuSeq: seq.cpu, cpuTtfb: ttfb.cpu, cpu64: par.cpu };
}

console.log('warming up ...');
for (const g of [A, B]) {
  await runLoad({ url: urlOf(g.url), method: 'POST', headers: headersOf(g.url), body: jsonBody, connections: 64, durationMs: 2000 });
  await runLoad({ url: urlOf(g.url), method: 'POST', headers: headersOf(g.url), body: streamBody, connections: 64, durationMs: 1000, firstChunk: true });
}
const figs: Record<'direct' | 'A' | 'B', Fig[]> = { direct: [], A: [], B: [] };
for (let round = 1; round <= ROUNDS; round++) {
  const order = round % 2 ? (['A', 'B'] as const) : (['B', 'A'] as const);
  figs.direct.push(await measure(simUrl));
  for (const k of order) figs[k].push(await measure(k === 'A' ? A.url : B.url, k === 'A' ? A.pid : B.pid));
  const d = figs.direct.at(-1)!;
  const line = (k: 'A' | 'B') => {
    const f = figs[k].at(-1)!;
    return `${k}: seq added ${(f.seq - d.seq).toFixed(3)} ms, TTFB added ${(f.ttfb - d.ttfb).toFixed(3)} ms, @64 ${(f.rps64 / d.rps64).toFixed(3)} of direct, CPU ms/req ${f.cpuSeq.toFixed(3)} / ${f.cpuTtfb.toFixed(3)} / ${f.cpu64.toFixed(3)}`;
  };
  console.log(`round ${round} (${order.join(', ')}): ${line('A')}; ${line('B')}`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const med = (k: keyof typeof figs, f: keyof Fig) => median(figs[k].map((x) => x[f]));
/** Per-round differences to direct (added latency) or ratios (throughput), then the median over rounds. */
const added = (k: 'A' | 'B', f: 'seq' | 'ttfb') => median(figs[k].map((x, i) => x[f] - figs.direct[i][f]));
const ratio = (k: 'A' | 'B') => median(figs[k].map((x, i) => x.rps64 / figs.direct[i].rps64));
console.log('');
console.log(`${new Date().toISOString()}  load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, median of ${ROUNDS} rounds, ${MS / 1000} s per load`);
console.log(`A = ${path.resolve(A_DIR)} (${flags(process.env.BENCH_A_FLAGS).join(' ') || 'no flags'}), B = ${process.cwd()} (${flags(process.env.BENCH_B_FLAGS).join(' ') || 'no flags'})`);
console.log(`direct: seq p50 ${med('direct', 'seq').toFixed(3)} ms, TTFB p50 ${med('direct', 'ttfb').toFixed(3)} ms, ${med('direct', 'rps64').toFixed(0)} req/s @64`);
for (const k of ['A', 'B'] as const) {
  console.log(`${k}: seq added p50 ${added(k, 'seq').toFixed(3)} ms, TTFB added p50 ${added(k, 'ttfb').toFixed(3)} ms, @64 ${ratio(k).toFixed(3)} of direct (${med(k, 'rps64').toFixed(0)} req/s), CPU ms/req seq ${med(k, 'cpuSeq').toFixed(3)}, TTFB ${med(k, 'cpuTtfb').toFixed(3)}, @64 ${med(k, 'cpu64').toFixed(3)}, RSS ${rss(k === 'A' ? A.pid : B.pid)}`);
}
console.log(`B over A: seq added x${(added('B', 'seq') / added('A', 'seq')).toFixed(2)}, TTFB added x${(added('B', 'ttfb') / added('A', 'ttfb')).toFixed(2)}, @64 x${(ratio('B') / ratio('A')).toFixed(2)}, CPU/req @64 x${(med('B', 'cpu64') / med('A', 'cpu64')).toFixed(2)}`);

// ---------------------------------------------------------------- paired sequential requests
// The rounds above compare seconds-long loads, between which this host's speed drifts by up to 2x. Here
// one client sends request after request, each to the next target in turn (direct, bare proxy, A, B, the
// order rotating), so every target sees the same moments of the host: the medians' differences are the
// added latencies with the drift cancelled.
const PAIRED = Number(process.env.BENCH_PAIRED ?? 3000);
if (PAIRED > 0) {
  const bareUrl = `http://127.0.0.1:${bareProxyPort}`;
  const targets = [
    { name: 'direct', url: `${simUrl}/ch/openai-a/v1/chat/completions`, headers: headersOf(simUrl) },
    { name: 'bare proxy', url: `${bareUrl}/v1/chat/completions`, headers: { 'content-type': 'application/json' } },
    { name: 'A', url: urlOf(A.url), headers: headersOf(A.url) },
    { name: 'B', url: urlOf(B.url), headers: headersOf(B.url) },
  ].map((t) => ({ ...t, pool: new Pool(new URL(t.url).origin, { connections: 1, pipelining: 1, keepAliveTimeout: 30_000 }), path: new URL(t.url).pathname }));
  for (const [label, body, firstChunk] of [['non-streaming, whole answer', jsonBody, false], ['streaming, first byte', streamBody, true]] as const) {
    const lat = targets.map(() => [] as number[]);
    for (let i = 0; i < PAIRED * targets.length; i++) {
      const k = (i + Math.floor(i / targets.length)) % targets.length;
      const t = targets[k];
      const t0 = performance.now();
      const res = await t.pool.request({ path: t.path, method: 'POST', headers: t.headers, body });
      let first = 0;
      for await (const _ of res.body) if (!first) first = performance.now();
      if (res.statusCode !== 200) throw new Error(`${t.name}: HTTP ${res.statusCode}`);
      lat[k].push((firstChunk ? first : performance.now()) - t0);
    }
    const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)];
    const d50 = pct(lat[0], 0.5);
    console.log(`paired, ${label} (${PAIRED} each): ` + targets.map((t, k) => `${t.name} p50 ${pct(lat[k], 0.5).toFixed(3)} ms${k ? ` (added ${(pct(lat[k], 0.5) - d50).toFixed(3)})` : ''}, p90 ${pct(lat[k], 0.9).toFixed(3)}`).join('; '));
  }
  for (const t of targets) await t.pool.close();
}

await stopAll();
await services.stop();
process.exit(0);
