/**
 * GET /v1/key/balance through the full middleware chain (trace, auth with the
 * Redis lookup, rate limiting on, JSON) as a ratio to a bare Koa route
 * measured in the same run. Target: at least 0.5.
 *   npm run bench:balance            (starts its own services on free ports)
 */
import { freePort } from '../scripts/lib/proc';
import { stopAll } from '../scripts/lib/proc';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { fmt, runLoad } from './lib/load';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 8) * 1000;

const { services, secrets } = await benchServices('balance');
const env = { ...services.env, ...secrets, LOG_LEVEL: 'warn' };
await runOnce('scripts/seed.ts', env);
const gwPort = await freePort();
await startProcess('gateway', 'gateway/server.ts', { ...env, PORT: String(gwPort) }, gwPort, process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=.data/profiles'] : []);
const barePort = await freePort();
await startProcess('bare-koa', 'bench/servers/bare-koa.ts', { PORT: String(barePort) }, barePort);

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
await runLoad({ url: bareUrl, connections: CONNECTIONS, durationMs: 2000 });

const bare = await runLoad({ url: bareUrl, connections: CONNECTIONS, durationMs: DURATION_MS });
const gw = await runLoad({ url: gatewayUrl, headers, connections: CONNECTIONS, durationMs: DURATION_MS });
const gwLimited = await runLoad({ url: gatewayUrl, headers: { authorization: `Bearer ${limitedKey.key}` }, connections: CONNECTIONS, durationMs: DURATION_MS });
const seqBare = await runLoad({ url: bareUrl, connections: 1, durationMs: 3000 });
const seqGw = await runLoad({ url: gatewayUrl, headers, connections: 1, durationMs: 3000 });
console.log(`bare Koa route        ${fmt(bare)}`);
console.log(`GET /v1/key/balance   ${fmt(gw)}   (default account: no limits)`);
console.log(`  with rate limits    ${fmt(gwLimited)}   (rpm and concurrency limits on)`);
console.log(`ratio gateway/bare    ${(gw.rps / bare.rps).toFixed(2)}  (target >= 0.5); with limits ${(gwLimited.rps / bare.rps).toFixed(2)}`);
console.log(`sequential: bare p50 ${seqBare.p50ms.toFixed(3)} ms, gateway p50 ${seqGw.p50ms.toFixed(3)} ms, added ${(seqGw.p50ms - seqBare.p50ms).toFixed(3)} ms`);
await stopAll();
await services.stop();
process.exit(0);
