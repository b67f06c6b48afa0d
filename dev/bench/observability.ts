/**
 * What metrics and tracing cost on the chat hot path, measured in one run:
 * four gateways against the same simulator, stores and key (plain; metrics
 * on; tracing on, exporting OTLP to a local sink in this process; both), and
 * the simulator direct as the floor. Non-streaming chat-completions, one
 * client (added p50 per request) and 64 clients (requests/s), in alternating
 * rounds; each figure is the median of the rounds. Ratios are against the
 * plain gateway of the same round. Nothing leaves the machine.
 *   npm run bench:observability
 * Env: BENCH_SECONDS (per load, default 4), BENCH_ROUNDS (3), BENCH_CONNECTIONS (64).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, spawnManaged, stopAll, waitForPort } from '../scripts/lib/proc';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { runLoad, type LoadResult } from './lib/load';
import path from 'node:path';

const LOAD_MS = Number(process.env.BENCH_SECONDS ?? 4) * 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);

// A stand-in OTLP collector: accepts every export, counts the bytes, keeps nothing.
let otlpBytes = 0;
let otlpRequests = 0;
const sink = http.createServer((req, res) => {
  req.on('data', (d: Buffer) => (otlpBytes += d.length));
  req.on('end', () => {
    otlpRequests++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const { services, secrets } = await benchServices('observability');
const simPort = await freePort();
await startProcess('simulator', 'dev/simulator/server.ts', { SIMULATOR_PORT: String(simPort) }, simPort);
const simUrl = `http://127.0.0.1:${simPort}`;
const env = { ...services.env, ...secrets, LOG_LEVEL: 'warn', SIMULATOR_URL: simUrl, OTEL_TRACES_EXPORTER: 'none' };
await runOnce('dev/scripts/seed.ts', env);

const TRACING = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' };
const variants: Array<{ name: string; env: Record<string, string> }> = [
  { name: 'plain', env: {} },
  { name: 'metrics', env: { METRICS_PORT: String(await freePort()) } },
  { name: 'tracing', env: TRACING },
  { name: 'metrics+tracing', env: { METRICS_PORT: String(await freePort()), ...TRACING } },
];
const gateways: Array<{ name: string; url: string; metricsPort?: string }> = [];
for (const v of variants) {
  const port = await freePort();
  // As package.json's `gateway` script: the tracing preload after tsx (it does nothing when OTEL_* asks for no traces).
  const proc = spawnManaged({
    name: `gateway-${v.name}`, cmd: process.execPath, args: ['--import', 'tsx', '--import', './platform/tracing/register.ts', 'gateway/server.ts'],
    env: { ...process.env, ...env, ...v.env, PORT: String(port) }, logFile: path.resolve(`.data/bench-logs/gateway-${v.name}.log`),
  });
  await waitForPort(port, proc, 180_000); // a loaded shared machine starts tsx slowly
  gateways.push({ name: v.name, url: `http://127.0.0.1:${port}`, metricsPort: v.env.METRICS_PORT });
}

const gw0 = gateways[0].url;
const admin = async (method: string, p: string, body: unknown) => {
  const r = await fetch(`${gw0}/admin/v1${p}`, { method, headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return (await r.json()) as any;
};
const account = await admin('POST', '/accounts', { name: 'bench' });
const key = (await admin('POST', `/accounts/${account.id}/keys`, { name: 'bench' })).key as string;
await admin('POST', `/accounts/${account.id}/topups`, { amount_usd: '1000000' });
await admin('PATCH', `/accounts/${account.id}`, { rate_limit: { rpm: 100_000_000, concurrency: 100_000 } });

const body = JSON.stringify({ model: 'gpt-5.1', messages: [{ role: 'user', content: 'Hello, benchmark: say something short.' }], max_tokens: 16 });
const direct = { url: `${simUrl}/ch/openai-a/v1/chat/completions`, headers: { authorization: 'Bearer upstream', 'content-type': 'application/json' } };
const targets = [{ name: 'direct', ...direct }, ...gateways.map((g) => ({ name: g.name, url: `${g.url}/v1/chat/completions`, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }))];

console.log(`warming up ${targets.length} targets...`);
for (const t of targets) await runLoad({ ...t, method: 'POST', body, connections: CONNECTIONS, durationMs: 1500 });

const seq = new Map<string, LoadResult[]>();
const par = new Map<string, LoadResult[]>();
for (let round = 1; round <= ROUNDS; round++) {
  // Alternate the order each round so no variant always runs on a warmer (or busier) machine.
  const order = round % 2 ? targets : [...targets].reverse();
  for (const t of order) {
    seq.set(t.name, [...(seq.get(t.name) ?? []), await runLoad({ ...t, method: 'POST', body, connections: 1, durationMs: LOAD_MS })]);
    par.set(t.name, [...(par.get(t.name) ?? []), await runLoad({ ...t, method: 'POST', body, connections: CONNECTIONS, durationMs: LOAD_MS })]);
  }
  console.log(`round ${round}/${ROUNDS} done`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p50 = (name: string) => median(seq.get(name)!.map((r) => r.p50ms));
const rps = (name: string) => median(par.get(name)!.map((r) => r.rps));
const errors = (name: string) => [...seq.get(name)!, ...par.get(name)!].reduce((n, r) => n + r.errors, 0);

console.log('');
console.log(`non-streaming chat-completions, median of ${ROUNDS} rounds of ${LOAD_MS / 1000} s; load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('variant            seq p50 ms  added vs direct  added vs plain   req/s @' + CONNECTIONS + '  ratio vs plain  errors');
for (const t of targets) {
  const addedDirect = t.name === 'direct' ? '' : (p50(t.name) - p50('direct')).toFixed(3);
  const addedPlain = t.name === 'direct' || t.name === 'plain' ? '' : (p50(t.name) - p50('plain')).toFixed(3);
  const ratio = t.name === 'direct' ? '' : (rps(t.name) / rps('plain')).toFixed(3);
  console.log(`${t.name.padEnd(18)} ${p50(t.name).toFixed(3).padStart(10)}  ${addedDirect.padStart(15)}  ${addedPlain.padStart(14)}  ${rps(t.name).toFixed(0).padStart(9)}  ${ratio.padStart(14)}  ${String(errors(t.name)).padStart(6)}`);
}
// The metrics gateways really counted and the tracing ones really exported.
for (const g of gateways.filter((x) => x.metricsPort)) {
  const text = await (await fetch(`http://127.0.0.1:${g.metricsPort}/metrics`)).text();
  const m = /gateway_http_request_duration_seconds_count\{[^}]*route="\/v1\/chat\/completions"[^}]*status="200"[^}]*\} (\d+)/.exec(text);
  console.log(`${g.name}: /metrics counted ${m?.[1] ?? 0} chat requests`);
}
await new Promise((r) => setTimeout(r, 6000)); // one batch-export interval
console.log(`tracing: ${otlpRequests} OTLP exports, ${(otlpBytes / 1e6).toFixed(1)} MB received by the local sink`);

await stopAll();
await services.stop();
sink.close();
process.exit(0);
