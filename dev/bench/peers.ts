/**
 * This gateway against the peers a user could put in front of the same
 * upstream, all measured in one run on this machine: Portkey's gateway (npm
 * `@portkey-ai/gateway`) and LiteLLM's proxy (PyPI `litellm[proxy]`, no
 * database), the floor of a proxy hop (a bare Koa + undici relay,
 * `servers/bare-proxy.ts`, and a bare Go `httputil.ReverseProxy`,
 * `servers/bare-go-proxy.go`, built on first use), the floor of a billing
 * gateway (that relay plus the auth read before the upstream and the charge
 * with its journal entry before the answer ends, in Redis:
 * `servers/floor-proxy.ts`), and the upstream simulator
 * called directly. Every target gets
 * the same chat-completions request for the same upstream channel; each
 * answer is checked (JSON with a message and usage; a stream with chunks and
 * `[DONE]`) before anything is timed. This gateway runs with auth, per-account
 * limits (high enough never to refuse) and billing on every call, and once
 * more for an account as created (no limits, the spec's default); the peers
 * run with neither. It runs twice: as production runs it (compiled, `npm
 * start`) and through the tsx loader (as dev and tests do).
 *
 * Printed per target: req/s at 64 clients (non-streaming), sequential p50/p99
 * and the added p50 over direct, streaming time to first byte p50 (sequential)
 * and its added p50, CPU per request of its process tree, RSS after load;
 * then issue 25's summary: the gateway against the bare Koa relay of the same
 * run (throughput, its own added p50 and stream first byte over the relay's)
 * and against Portkey; the floor against the relay and the gateway against
 * the floor. Each figure is the median of BENCH_ROUNDS rounds (3).
 *   npm run bench:peers
 * Env: BENCH_SECONDS (5, per load), BENCH_ROUNDS (3), BENCH_PEERS (portkey,litellm; "" for none).
 * The peers are installed on first use, outside the clone:
 *   ~/.cache/model-gateway/peers/portkey-<v>/ (npm) and ~/.cache/model-gateway/peers/litellm-<v>/ (a venv);
 *   the Go relay is built with the machine's Go (standard library only) into
 *   ~/.cache/model-gateway/peers/bare-go-proxy-<hash of its source>.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { freePort, spawnManaged, stopAll, waitForPort, type Managed } from '../scripts/lib/proc';
import { scratchDir } from '../scripts/lib/scratch';
import { buildAll, gatewayNodeFlags } from '../scripts/build';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { runLoad, type LoadResult } from './lib/load';
import { pidOfPort } from './lib/cpu';

const PORTKEY_VERSION = '1.15.2';
const LITELLM_VERSION = '1.106.2';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PEERS = (process.env.BENCH_PEERS ?? 'portkey,litellm').split(',').filter(Boolean);
const CACHE = path.join(os.homedir(), '.cache', 'model-gateway', 'peers');
const MODEL = 'gpt-5.1';
const BARE_KOA = 'bare Koa relay';
const FLOOR = 'billing floor';
const GW_DEFAULT = 'gateway, no limits';
const CHANNEL = 'openai-a';

// ------------------------------------------------------------------ peers installed outside the clone
function ensurePortkey(): string {
  const dir = path.join(CACHE, `portkey-${PORTKEY_VERSION}`);
  const entry = path.join(dir, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (!fs.existsSync(path.join(dir, '.installed'))) {
    console.log(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${dir} ...`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--save-exact', `@portkey-ai/gateway@${PORTKEY_VERSION}`], { cwd: dir, stdio: 'inherit' });
    fs.writeFileSync(path.join(dir, '.installed'), '');
  }
  return entry;
}

function ensureLitellm(): string {
  const dir = path.join(CACHE, `litellm-${LITELLM_VERSION}`);
  const bin = path.join(dir, 'bin', 'litellm');
  if (!fs.existsSync(path.join(dir, '.installed'))) {
    console.log(`installing litellm[proxy]==${LITELLM_VERSION} into a venv at ${dir} (a few minutes) ...`);
    execFileSync('python3', ['-m', 'venv', dir], { stdio: 'inherit' });
    execFileSync(path.join(dir, 'bin', 'pip'), ['install', '-q', `litellm[proxy]==${LITELLM_VERSION}`], { stdio: 'inherit' });
    fs.writeFileSync(path.join(dir, '.installed'), '');
  }
  return bin;
}

/** The bare Go relay, built once per version of its source. */
function ensureGoRelay(): string {
  const source = path.resolve('dev/bench/servers/bare-go-proxy.go');
  const hash = createHash('sha256').update(fs.readFileSync(source)).digest('hex').slice(0, 12);
  const bin = path.join(CACHE, `bare-go-proxy-${hash}`);
  if (!fs.existsSync(bin)) {
    console.log(`building ${path.relative(process.cwd(), source)} with ${execFileSync('go', ['version']).toString().trim()} ...`);
    fs.mkdirSync(CACHE, { recursive: true });
    execFileSync('go', ['build', '-trimpath', '-o', `${bin}.tmp`, source], { stdio: 'inherit', cwd: CACHE });
    fs.renameSync(`${bin}.tmp`, bin);
    // Builds of earlier versions of the source are not used again.
    for (const f of fs.readdirSync(CACHE)) if (f.startsWith('bare-go-proxy-') && path.join(CACHE, f) !== bin) fs.rmSync(path.join(CACHE, f), { force: true });
  }
  return bin;
}

// ------------------------------------------------------------------ process figures
function ticks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime
}
/** The process and its descendants (LiteLLM's server may fork workers). */
function tree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // gone meanwhile
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]) ?? []));
  return out;
}
const treeTicks = (pid: number) => tree(pid).reduce((sum, p) => sum + (() => { try { return ticks(p); } catch { return 0; } })(), 0);
const treeRssMb = (pid: number) => tree(pid).reduce((sum, p) => {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
    return sum + (m ? Number(m[1]) / 1024 : 0);
  } catch {
    return sum;
  }
}, 0);
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100);

// ------------------------------------------------------------------ targets
interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  pid?: number;
  /** Its calls use the project's stores (Redis, FerretDB): their CPU at 64 clients is counted for it too. */
  stores?: boolean;
  /** Set when the target could not stream the request (its TTFB is not measured). */
  streamFailure?: string;
}

const { services, secrets } = await benchServices('peers');
const simPort = await freePort();
await startProcess('simulator', 'dev/simulator/server.ts', { SIMULATOR_PORT: String(simPort) }, simPort);
const simUrl = `http://127.0.0.1:${simPort}`;
const upstreamBase = `${simUrl}/ch/${CHANNEL}/v1`;
const env = { ...services.env, ...secrets, LOG_LEVEL: 'warn', SIMULATOR_URL: simUrl };
await runOnce('dev/scripts/seed.ts', env);

console.log('building the compiled gateway (dev/scripts/build.ts) ...');
await buildAll();
const gwCompiledPort = await freePort();
const gwCompiled = spawnManaged({
  name: 'gateway-compiled', cmd: process.execPath, args: [...gatewayNodeFlags(), 'dist/gateway.mjs'],
  env: { ...process.env, ...env, PORT: String(gwCompiledPort) }, logFile: path.resolve('.data/bench-logs/gateway-compiled.log'),
});
await waitForPort(gwCompiledPort, gwCompiled, 120_000);
// Ready as a load balancer (or a harness) would ask: /readyz calls Temporal, which once turned async
// hooks on for the process on Node 20 (round 21); measuring after it keeps that in view.
const ready = await fetch(`http://127.0.0.1:${gwCompiledPort}/readyz`);
if (ready.status !== 200) throw new Error(`the gateway is not ready: ${ready.status} ${await ready.text()}`);
const gwTsxPort = await freePort();
const gwTsx = await startProcess('gateway-tsx', 'gateway/server.ts', { ...env, PORT: String(gwTsxPort) }, gwTsxPort);

const gwUrl = `http://127.0.0.1:${gwCompiledPort}`;
const admin = async (method: string, p: string, body: unknown) => {
  const r = await fetch(`${gwUrl}/admin/v1${p}`, { method, headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return (await r.json()) as any;
};
const account = await admin('POST', '/accounts', { name: 'bench-peers' });
const key = (await admin('POST', `/accounts/${account.id}/keys`, { name: 'bench' })).key as string;
await admin('POST', `/accounts/${account.id}/topups`, { amount_usd: '1000000' });
await admin('PATCH', `/accounts/${account.id}`, { rate_limit: { rpm: 100_000_000, concurrency: 100_000 } });
// An account as created, the spec's defaults (no rate limits): the shape a user starts with.
const plainAccount = await admin('POST', '/accounts', { name: 'bench-peers-default' });
const plainKey = (await admin('POST', `/accounts/${plainAccount.id}/keys`, { name: 'bench' })).key as string;
await admin('POST', `/accounts/${plainAccount.id}/topups`, { amount_usd: '1000000' });

const json = { 'content-type': 'application/json' };
const targets: Target[] = [
  { name: 'direct', url: `${upstreamBase}/chat/completions`, headers: { ...json, authorization: 'Bearer upstream' } },
  { name: 'gateway', url: `${gwUrl}/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${key}` }, pid: gwCompiled.child.pid, stores: true },
  { name: GW_DEFAULT, url: `${gwUrl}/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${plainKey}` }, pid: gwCompiled.child.pid, stores: true },
  { name: 'gateway (tsx)', url: `http://127.0.0.1:${gwTsxPort}/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${key}` }, pid: gwTsx.child.pid, stores: true },
];

// The floor of a proxy hop on this machine, in Node and in Go: what the gateway adds over the Koa relay is its own.
const bareKoaPort = await freePort();
const bareKoa = await startProcess('bare-proxy', 'dev/bench/servers/bare-proxy.ts', { UPSTREAM: `${simUrl}/ch/${CHANNEL}`, PORT: String(bareKoaPort) }, bareKoaPort);
targets.push({ name: BARE_KOA, url: `http://127.0.0.1:${bareKoaPort}/v1/chat/completions`, headers: json, pid: bareKoa.child.pid });
// The least this gateway's contract costs a call: the same relay plus the auth read before the upstream and the
// charge with its journal entry before the answer ends, on the same Redis, the journal drained into the same store,
// one document a call (servers/floor-proxy.ts).
const floorPort = await freePort();
const floorKey = `sk-floor-${randomBytes(8).toString('hex')}`;
const floor = await startProcess('floor-proxy', 'dev/bench/servers/floor-proxy.ts', { UPSTREAM: `${simUrl}/ch/${CHANNEL}`, PORT: String(floorPort), REDIS_URL: services.env.REDIS_URL, MONGO_URL: services.env.MONGO_URL, KEY: floorKey }, floorPort);
targets.push({ name: FLOOR, url: `http://127.0.0.1:${floorPort}/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${floorKey}` }, pid: floor.child.pid, stores: true });
const peers: Managed[] = [];
let goRelay: string | undefined;
try {
  goRelay = ensureGoRelay();
} catch (err) {
  console.log(`  the bare Go relay is left out: it could not be built (${String(err).split('\n')[0]})`);
}
if (goRelay) {
  const bareGoPort = await freePort();
  const bareGo = spawnManaged({
    name: 'bare-go-proxy', cmd: goRelay, args: [], env: { ...process.env, UPSTREAM: `${simUrl}/ch/${CHANNEL}`, PORT: String(bareGoPort) },
    logFile: path.resolve('.data/bench-logs/bare-go-proxy.log'),
  });
  await waitForPort(bareGoPort, bareGo, 30_000);
  peers.push(bareGo);
  targets.push({ name: 'bare Go relay', url: `http://127.0.0.1:${bareGoPort}/v1/chat/completions`, headers: json, pid: bareGo.child.pid });
}

if (PEERS.includes('portkey')) {
  const entry = ensurePortkey();
  const port = await freePort();
  const p = spawnManaged({
    name: 'portkey', cmd: process.execPath, args: [entry, `--port=${port}`, '--headless'], cwd: path.dirname(entry),
    env: { ...process.env, NODE_ENV: 'production' }, logFile: path.resolve('.data/bench-logs/portkey.log'),
  });
  await waitForPort(port, p, 120_000);
  peers.push(p);
  targets.push({
    name: `portkey ${PORTKEY_VERSION}`, url: `http://127.0.0.1:${port}/v1/chat/completions`, pid: p.child.pid,
    headers: { ...json, authorization: 'Bearer upstream', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstreamBase },
  });
}
if (PEERS.includes('litellm')) {
  const bin = ensureLitellm();
  const port = await freePort();
  const dir = scratchDir('litellm');
  const config = path.join(dir, 'config.yaml');
  const litellmKey = `sk-${randomBytes(24).toString('hex')}`;
  fs.writeFileSync(config, [
    'model_list:',
    `  - model_name: ${MODEL}`,
    '    litellm_params:',
    `      model: openai/${MODEL}`,
    `      api_base: ${upstreamBase}`,
    '      api_key: upstream',
    'litellm_settings:',
    '  telemetry: false',
    // The proxy refuses to start without a master key (no database: the key alone authenticates).
    'general_settings:',
    `  master_key: ${litellmKey}`,
    '',
  ].join('\n'));
  const p = spawnManaged({
    name: 'litellm', cmd: bin, args: ['--config', config, '--host', '127.0.0.1', '--port', String(port), '--num_workers', '1'],
    env: { ...process.env, LITELLM_LOG: 'ERROR', LITELLM_TELEMETRY: 'False', NO_DOCS: 'True', DISABLE_SCHEMA_UPDATE: 'True' },
    logFile: path.resolve('.data/bench-logs/litellm.log'),
  });
  await waitForPort(port, p, 300_000);
  peers.push(p);
  targets.push({ name: `litellm ${LITELLM_VERSION}`, url: `http://127.0.0.1:${port}/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${litellmKey}` }, pid: p.child.pid });
}

// ------------------------------------------------------------------ the same request, checked on every target
const messages = [{ role: 'user', content: 'Hello, benchmark: say something short.' }];
const plainBody = JSON.stringify({ model: MODEL, messages, max_tokens: 16 });
const streamBody = JSON.stringify({ model: MODEL, messages, max_tokens: 16, stream: true, stream_options: { include_usage: true } });

/** Checks both answers; a broken plain answer stops the bench, a broken stream only drops that target's TTFB. */
async function check(t: Target): Promise<void> {
  const r = await request(t.url, { method: 'POST', headers: t.headers, body: plainBody });
  const text = await r.body.text();
  const answer = JSON.parse(text);
  const content = answer?.choices?.[0]?.message?.content;
  if (r.statusCode !== 200 || typeof content !== 'string' || content.length === 0 || !(answer.usage?.completion_tokens > 0)) {
    throw new Error(`${t.name}: wrong answer (HTTP ${r.statusCode}): ${text.slice(0, 300)}`);
  }
  const s = await request(t.url, { method: 'POST', headers: t.headers, body: streamBody });
  const sse = await s.body.text();
  const chunks = sse.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => { try { return JSON.parse(l.slice(6)); } catch { return {}; } });
  const streamed = chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
  if (s.statusCode !== 200 || !sse.includes('data: [DONE]') || streamed.length === 0) {
    t.streamFailure = `HTTP ${s.statusCode}: ${sse.slice(0, 120)}`;
    console.log(`  ${t.name}: the stream failed (${t.streamFailure}); its TTFB is left out`);
  }
}
for (const t of targets) await check(t);
console.log(`every target answered correctly: ${targets.map((t) => t.name).join(', ')}`);

// ------------------------------------------------------------------ load
interface Figures {
  rps64: number;
  seqP50: number;
  seqP99: number;
  ttfbP50: number;
  cpuMsPerReq?: number;
  /** Redis's and FerretDB's CPU a call over the same 64-client load, for the targets that use them. */
  storesMsPerReq?: number;
  rssMb?: number;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = (t: Target, body: string, connections: number, firstChunk = false): Promise<LoadResult> =>
  runLoad({ url: t.url, method: 'POST', headers: t.headers, body, connections, durationMs: SECONDS * 1000, firstChunk });

console.log(`warming up (${targets.length} targets) ...`);
for (const t of targets) await runLoad({ url: t.url, method: 'POST', headers: t.headers, body: plainBody, connections: 64, durationMs: 2000 });

const storePids = [pidOfPort(services.env.REDIS_URL), pidOfPort(services.env.MONGO_URL)].filter((p): p is number => p !== undefined);
const rounds = new Map<string, Figures[]>(targets.map((t) => [t.name, []]));
for (let round = 1; round <= ROUNDS; round++) {
  console.log(`round ${round} of ${ROUNDS} ...`);
  // The gateway's two accounts share one process: the one measured second finds it warm, so they take turns.
  const order = round % 2 === 1 ? targets : targets.map((t, i) => (t.name === 'gateway' ? targets[i + 1] : t.name === GW_DEFAULT ? targets[i - 1] : t));
  for (const t of order) {
    const before = t.pid ? treeTicks(t.pid) : 0;
    const storesBefore = t.stores ? storePids.reduce((sum, p) => sum + ticks(p), 0) : 0;
    const par = await load(t, plainBody, 64);
    const cpu = t.pid ? ((treeTicks(t.pid) - before) * TICK_MS) / par.requests : undefined;
    const stores = t.stores ? ((storePids.reduce((sum, p) => sum + ticks(p), 0) - storesBefore) * TICK_MS) / par.requests : undefined;
    const seq = await load(t, plainBody, 1);
    const ttfb = t.streamFailure ? { p50ms: NaN, errors: 0 } : await load(t, streamBody, 1, true);
    const errors = par.errors + seq.errors + ttfb.errors;
    if (errors) console.log(`  ${t.name}: ${errors} failed requests`);
    rounds.get(t.name)!.push({ rps64: par.rps, seqP50: seq.p50ms, seqP99: seq.p99ms, ttfbP50: ttfb.p50ms, cpuMsPerReq: cpu, storesMsPerReq: stores, rssMb: t.pid ? treeRssMb(t.pid) : undefined });
  }
}

const fig = new Map<string, Figures>();
for (const [name, rs] of rounds) {
  const m = (k: keyof Figures) => (rs[0][k] === undefined ? undefined : median(rs.map((r) => r[k] as number)));
  fig.set(name, { rps64: m('rps64')!, seqP50: m('seqP50')!, seqP99: m('seqP99')!, ttfbP50: m('ttfbP50')!, cpuMsPerReq: m('cpuMsPerReq'), storesMsPerReq: m('storesMsPerReq'), rssMb: Math.max(...rs.map((r) => r.rssMb ?? 0)) || undefined });
}

// ------------------------------------------------------------------ report
const d = fig.get('direct')!;
const pad = (s: string, n: number) => s.padEnd(n);
const num = (x: number | undefined, digits = 2) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits));
const load1 = os.loadavg().map((x) => x.toFixed(2)).join(' ');
console.log('');
console.log(`${new Date().toISOString()}  ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, load average ${load1}, median of ${ROUNDS} rounds, ${SECONDS} s per load`);
console.log(`${pad('target', 22)}${pad('req/s @64', 11)}${pad('x direct', 10)}${pad('seq p50/p99 ms', 17)}${pad('added p50', 11)}${pad('TTFB p50', 10)}${pad('added', 8)}${pad('CPU ms/req', 12)}${pad('+ stores', 10)}RSS MB`);
for (const t of targets) {
  const f = fig.get(t.name)!;
  const isDirect = t.name === 'direct';
  console.log(
    pad(t.name, 22) + pad(f.rps64.toFixed(0), 11) + pad(isDirect ? '1' : (f.rps64 / d.rps64).toFixed(3), 10) +
      pad(`${num(f.seqP50)} / ${num(f.seqP99)}`, 17) + pad(isDirect ? '-' : (f.seqP50 - d.seqP50).toFixed(3), 11) +
      pad(t.streamFailure ? 'failed' : num(f.ttfbP50), 10) + pad(isDirect ? '-' : num(f.ttfbP50 - d.ttfbP50, 3), 8) + pad(num(f.cpuMsPerReq, 3), 12) + pad(num(f.storesMsPerReq, 3), 10) + num(f.rssMb, 0),
  );
}
const g = fig.get('gateway')!;
const gd = fig.get(GW_DEFAULT)!;
const tsx = fig.get('gateway (tsx)')!;
const relay = fig.get(BARE_KOA)!;
const least = fig.get(FLOOR)!;
const portkey = [...fig].find(([n]) => n.startsWith('portkey'))?.[1];
console.log('');
console.log('against the bare Koa relay of this run (issue 25), this gateway as production runs it (compiled):');
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
const ownP50 = g.seqP50 - relay.seqP50;
const ownTtfb = g.ttfbP50 - relay.ttfbP50;
console.log(`  64-client throughput ${(g.rps64 / relay.rps64).toFixed(2)} of the relay (target >= 0.5): ${verdict(g.rps64 / relay.rps64 >= 0.5)}`);
console.log(`  own added p50, sequential: ${ownP50.toFixed(3)} ms over the relay's (target < 0.25): ${verdict(ownP50 < 0.25)}`);
console.log(`  own added stream first byte p50: ${num(ownTtfb, 3)} ms over the relay's (target < 0.25): ${verdict(ownTtfb < 0.25)}`);
const withStores = (f: Figures) => (f.cpuMsPerReq ?? NaN) + (f.storesMsPerReq ?? NaN);
console.log(`  CPU a call at 64 clients with its stores (Redis, FerretDB): ${num(withStores(g), 3)} ms (target <= 0.25): ${verdict(withStores(g) <= 0.25)}`);
if (portkey) console.log(`  64-client throughput ${(g.rps64 / portkey.rps64).toFixed(2)} x Portkey (target >= 2): ${verdict(g.rps64 / portkey.rps64 >= 2)}`);
console.log('the same gateway for an account as created (no rate limits, the spec\'s default):');
console.log(`  64-client throughput ${(gd.rps64 / relay.rps64).toFixed(2)} of the relay (target >= 0.5): ${verdict(gd.rps64 / relay.rps64 >= 0.5)}`);
console.log(`  own added p50 ${(gd.seqP50 - relay.seqP50).toFixed(3)} ms, own first byte ${num(gd.ttfbP50 - relay.ttfbP50, 3)} ms (target < 0.25): ${verdict(gd.seqP50 - relay.seqP50 < 0.25 && gd.ttfbP50 - relay.ttfbP50 < 0.25)}`);
console.log(`  CPU a call with its stores ${num(withStores(gd), 3)} ms (target <= 0.25): ${verdict(withStores(gd) <= 0.25)}`);
if (portkey) console.log(`  64-client throughput ${(gd.rps64 / portkey.rps64).toFixed(2)} x Portkey (target >= 2): ${verdict(gd.rps64 / portkey.rps64 >= 2)}`);
console.log('the billing floor (the relay plus the auth read, the charge in Redis and a row a call in the store, nothing else) against the same relay, and the gateway against it:');
console.log(`  floor: throughput ${(least.rps64 / relay.rps64).toFixed(2)} of the relay, own added p50 ${(least.seqP50 - relay.seqP50).toFixed(3)} ms, own first byte ${num(least.ttfbP50 - relay.ttfbP50, 3)} ms, CPU/req ${num(least.cpuMsPerReq, 3)} ms (relay ${num(relay.cpuMsPerReq, 3)}), with its stores ${num(withStores(least), 3)} ms`);
console.log(`  gateway over the floor: throughput ${(g.rps64 / least.rps64).toFixed(2)} of it, added p50 ${(g.seqP50 - least.seqP50).toFixed(3)} ms, first byte ${num(g.ttfbP50 - least.ttfbP50, 3)} ms, CPU/req ${num((g.cpuMsPerReq ?? NaN) - (least.cpuMsPerReq ?? NaN), 3)} ms, with the stores ${num(withStores(g) - withStores(least), 3)} ms`);
console.log(`compiled vs tsx: throughput x${(g.rps64 / tsx.rps64).toFixed(2)}, sequential p50 ${num(g.seqP50, 3)} vs ${num(tsx.seqP50, 3)} ms, CPU/req ${num(g.cpuMsPerReq, 3)} vs ${num(tsx.cpuMsPerReq, 3)} ms, RSS ${num(g.rssMb, 0)} vs ${num(tsx.rssMb, 0)} MB`);

for (const p of peers) await p.stop();
await stopAll();
await services.stop();
process.exit(0);
