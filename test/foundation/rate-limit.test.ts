import test from 'ava';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { startGateway, type TestGateway } from '../helpers/stack';
import { rateLimit } from '../../gateway/middleware/rate-limit';
import { authenticate } from '../../gateway/middleware/auth';
import { trace } from '../../gateway/middleware/trace';
import { errorHandler } from '../../gateway/middleware/error-handler';
import { createLogger } from '../../platform/logger';
import type { GatewayState } from '../../gateway/context';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

test('rpm 50 with 200 concurrent requests: exactly 50 pass, the rest get 429 with the headers', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  await gw.admin('PATCH', `/accounts/${a.id}`, { rate_limit: { rpm: 50 } });
  const res = await Promise.all(
    Array.from({ length: 200 }, () => fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${k.key}` } })),
  );
  const ok = res.filter((r) => r.status === 200);
  const limited = res.filter((r) => r.status === 429);
  t.is(ok.length, 50);
  t.is(limited.length, 150);
  const r = limited[0];
  t.truthy(Number(r.headers.get('retry-after')) >= 1);
  t.is(r.headers.get('x-ratelimit-limit-requests'), '50');
  t.is(r.headers.get('x-ratelimit-remaining-requests'), '0');
  t.regex(r.headers.get('x-ratelimit-reset-requests') ?? '', /^\d+s$/);
  const body = (await r.json()) as { error: { code: string; type: string } };
  t.is(body.error.code, 'rate_limit_exceeded');
  t.is(body.error.type, 'rate_limit_error');
  // successful responses carry the headers when a limit exists
  t.is(ok[0].headers.get('x-ratelimit-limit-requests'), '50');
  await Promise.all(res.filter((x) => x !== r).map((x) => x.body?.cancel()));
});

test('the balance and billing reads do not count: they answer at the limit and leave the window as it was', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  await gw.admin('PATCH', `/accounts/${a.id}`, { rate_limit: { rpm: 2 } });
  const h = { authorization: `Bearer ${k.key}` };
  for (let i = 0; i < 5; i++) t.is((await fetch(`${gw.url}/v1/key/balance`, { headers: h })).status, 200);
  const first = await fetch(`${gw.url}/v1/models`, { headers: h });
  t.is(first.status, 200);
  t.is(first.headers.get('x-ratelimit-remaining-requests'), '1');
  t.is((await fetch(`${gw.url}/v1/models`, { headers: h })).status, 200);
  t.is((await fetch(`${gw.url}/v1/models`, { headers: h })).status, 429);
  for (const path of ['/v1/key/balance', '/v1/dashboard/billing/subscription', '/dashboard/billing/usage']) {
    const r = await fetch(`${gw.url}${path}`, { headers: h });
    t.is(r.status, 200, path);
    await r.body?.cancel();
  }
});

test('no limit set: no x-ratelimit headers', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const r = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${k.key}` } });
  t.is(r.status, 200);
  t.is(r.headers.get('x-ratelimit-limit-requests'), null);
});

test('concurrency 5 with 50 parallel slow requests: never more than 5 in flight', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  await gw.admin('PATCH', `/accounts/${a.id}`, { rate_limit: { concurrency: 5 } });
  // The real authentication and limiter middleware on a route whose handler is slow.
  const app = new Koa<GatewayState>();
  let inFlight = 0;
  let peak = 0;
  app.use(errorHandler(createLogger('silent')));
  app.use(trace(createLogger('silent')));
  app.use(authenticate(gw.deps, { methods: 'all', billable: true, touchLastUsed: false }));
  app.use(rateLimit());
  app.use(async (ctx) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise((r) => setTimeout(r, 150));
    inFlight--;
    ctx.body = { ok: true };
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const statuses: number[] = [];
  // 50 clients that retry after a 429 until served.
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      for (;;) {
        const r = await fetch(url, { headers: { authorization: `Bearer ${k.key}` } });
        statuses.push(r.status);
        await r.body?.cancel();
        if (r.status === 200) return;
        await new Promise((res) => setTimeout(res, 20));
      }
    }),
  );
  server.close();
  t.true(peak <= 5, `peak ${peak}`);
  t.is(peak, 5);
  t.is(statuses.filter((s) => s === 200).length, 50);
  t.true(statuses.includes(429));
});

test('a crashed gateway slot expires by lease; a finished request frees its slot', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  await gw.admin('PATCH', `/accounts/${a.id}`, { rate_limit: { concurrency: 1 } });
  const get = () => fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${k.key}` } });
  // A live slot held by another (crashed) gateway blocks...
  await gw.deps.redis.zadd(accountRedisKeys.rateLeases(a.id), Date.now() + 60_000, 'held-by-dead-gateway');
  const blocked = await get();
  t.is(blocked.status, 429);
  t.is(blocked.headers.get('x-ratelimit-limit-concurrency'), '1');
  t.is(blocked.headers.get('x-ratelimit-remaining-concurrency'), '0');
  // ...until its lease runs out.
  await gw.deps.redis.zadd(accountRedisKeys.rateLeases(a.id), Date.now() - 1, 'held-by-dead-gateway');
  t.is((await get()).status, 200);
  // Finished requests free their slot: sequential requests never block each other.
  for (let i = 0; i < 5; i++) t.is((await get()).status, 200);
  t.is(await gw.deps.redis.zcard(accountRedisKeys.rateLeases(a.id)), 0);
});
