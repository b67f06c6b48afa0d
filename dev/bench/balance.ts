/**
 * GET /v1/key/balance through the full middleware chain (trace, auth with the
 * Redis lookup, rate limiting on, JSON) as a ratio to a bare Koa route
 * measured in the same run: 3 interleaved rounds (bare, gateway, gateway with
 * limits), medians; plus CPU ms per request of the gateway, Redis and the
 * bare server. Target: at least 0.5.
 *   npm run bench:balance            (starts its own services on free ports)
 *   BENCH_CONNECTIONS=32 BENCH_SECONDS=8 BENCH_ROUNDS=3 BENCH_PROFILE=1
 */
import { freePort } from '../scripts/lib/proc';
import { stopAll } from '../scripts/lib/proc';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { fmt, runLoad, type LoadResult } from './lib/load';
import { findPid, perUnit, processSet } from './lib/cpu';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 8) * 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const { services, secrets } = await benchServices('balance');
const env = { ...services.env, ...secrets, LOG_LEVEL: 'warn' };
await runOnce('dev/scripts/seed.ts', env);
const gwPort = await freePort();
const gwProc = await startProcess('gateway', 'gateway/server.ts', { ...env, PORT: String(gwPort) }, gwPort, process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=.data/profiles'] : []);
const barePort = await freePort();
const bareProc = await startProcess('bare-koa', 'dev/bench/servers/bare-koa.ts', { PORT: String(barePort) }, barePort);
const procs = processSet({ gateway: gwProc.child.pid, redis: findPid(`127.0.0.1:${new URL(services.env.REDIS_URL).port}`), 'bare koa': bareProc.child.pid });

const admin = async (path: string, body: unknown) => {
  const r = await fetch(`http://127.0.0.1:${gwPort}/admin/v1${path}`, {
    method: path.endsWith('/accounts') || path.includes('/keys') ? 'POST' : 'PATCH',
    headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await r.json()) as any;
};
// The default account has no limits (spec 1 section 8); a second one has limits high enough never to refuse.
const account = await admin('/accounts', { name: 'bench' });
const key = await admin(`/accounts/${account.id}/keys`, { name: 'bench' });
const limitedAccount = await admin('/accounts', { name: 'bench-limited' });
const limitedKey = await admin(`/accounts/${limitedAccount.id}/keys`, { name: 'bench' });
await admin(`/accounts/${limitedAccount.id}`, { rate_limit: { rpm: 10_000_000, concurrency: 10_000 } });

const gatewayUrl = `http://127.0.0.1:${gwPort}/v1/key/balance`;
const bareUrl = `http://127.0.0.1:${barePort}/`;
const headers = { authorization: `Bearer ${key.key}` };
console.log(`warming up (${CONNECTIONS} connections)...`);
await runLoad({ url: gatewayUrl, headers, connections: CONNECTIONS, durationMs: 2000 });
await runLoad({ url: gatewayUrl, headers: { authorization: `Bearer ${limitedKey.key}` }, connections: CONNECTIONS, durationMs: 1000 });
await runLoad({ url: bareUrl, connections: CONNECTIONS, durationMs: 2000 });

type Measured = LoadResult & { cpu: Record<string, number> };
async function measured(opts: Parameters<typeof runLoad>[0]): Promise<Measured> {
  const c0 = procs.sample();
  const r = await runLoad(opts);
  return { ...r, cpu: perUnit(c0, procs.sample(), r.requests) };
}
const rounds: Array<{ bare: Measured; gw: Measured; limited: Measured }> = [];
for (let i = 0; i < ROUNDS; i++) {
  const bare = await measured({ url: bareUrl, connections: CONNECTIONS, durationMs: DURATION_MS });
  const gw = await measured({ url: gatewayUrl, headers, connections: CONNECTIONS, durationMs: DURATION_MS });
  const limited = await measured({ url: gatewayUrl, headers: { authorization: `Bearer ${limitedKey.key}` }, connections: CONNECTIONS, durationMs: DURATION_MS });
  rounds.push({ bare, gw, limited });
  console.log(`round ${i + 1}: bare ${bare.rps.toFixed(0)} req/s, gateway ${gw.rps.toFixed(0)} (${(gw.rps / bare.rps).toFixed(2)}), with limits ${limited.rps.toFixed(0)} (${(limited.rps / bare.rps).toFixed(2)})`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** The round whose ratio is the median one, so the figures printed belong together. */
const mid = (ratio: (r: (typeof rounds)[number]) => number) => [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor(rounds.length / 2)];
const m = mid((r) => r.gw.rps / r.bare.rps);
const ml = mid((r) => r.limited.rps / r.bare.rps);
const seqBare = await runLoad({ url: bareUrl, connections: 1, durationMs: 3000 });
const seqGw = await runLoad({ url: gatewayUrl, headers, connections: 1, durationMs: 3000 });
console.log(`\n${CONNECTIONS} connections, ${DURATION_MS / 1000} s per phase, median of ${ROUNDS} interleaved rounds`);
console.log(`bare Koa route        ${fmt(m.bare)}`);
console.log(`GET /v1/key/balance   ${fmt(m.gw)}   (default account: no limits)`);
console.log(`  with rate limits    ${fmt(ml.limited)}   (rpm and concurrency limits on)`);
console.log(`ratio gateway/bare    ${median(rounds.map((r) => r.gw.rps / r.bare.rps)).toFixed(2)}  (target >= 0.5); with limits ${median(rounds.map((r) => r.limited.rps / r.bare.rps)).toFixed(2)}`);
console.log(`sequential: bare p50 ${seqBare.p50ms.toFixed(3)} ms, gateway p50 ${seqGw.p50ms.toFixed(3)} ms, added ${(seqGw.p50ms - seqBare.p50ms).toFixed(3)} ms`);
console.log(`CPU ms per request    bare: koa ${m.bare.cpu['bare koa'].toFixed(3)}, client ${m.bare.cpu['bench client'].toFixed(3)}`);
console.log(`                      gateway: gateway ${m.gw.cpu.gateway.toFixed(3)}, redis ${m.gw.cpu.redis.toFixed(3)}, client ${m.gw.cpu['bench client'].toFixed(3)}`);
console.log(`                      with limits: gateway ${ml.limited.cpu.gateway.toFixed(3)}, redis ${ml.limited.cpu.redis.toFixed(3)}`);
await stopAll();
await services.stop();
process.exit(0);
