import test from 'ava';
import net from 'node:net';
import { startGateway, type TestGateway } from '../helpers/stack';

/**
 * GET /readyz (the chart's readinessProbe, compose's healthcheck): 200 while MongoDB, Redis and Temporal
 * all answer; 503 naming the one that does not, while /healthz (liveness) still answers.
 */
const gateways: TestGateway[] = [];
test.after.always(async () => {
  // The gateway of a dead Temporal fails its close (its channel never connected): nothing to clean up there.
  await Promise.all(gateways.map((g) => g.close().catch(() => undefined)));
});

/** A port with nothing listening on it (bound, then closed). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

test('ready when every store answers', async (t) => {
  const gw = await startGateway();
  gateways.push(gw);
  // The first probe also opens the lazy Temporal connection: a loaded machine may need a second one.
  let res = await fetch(`${gw.url}/readyz`);
  for (let i = 0; i < 5 && res.status !== 200; i++) {
    await res.body?.cancel();
    res = await fetch(`${gw.url}/readyz`);
  }
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'no-store');
  t.deepEqual(await res.json(), { status: 'ready', checks: { mongo: 'ok', redis: 'ok', temporal: 'ok' } });
});

test('not ready, naming Redis, when Redis does not answer; still alive (a liveness probe must not restart every replica for an outage)', async (t) => {
  const gw = await startGateway();
  gateways.push(gw);
  const ping = gw.deps.redis.ping.bind(gw.deps.redis);
  (gw.deps.redis as { ping: () => Promise<string> }).ping = () => Promise.reject(new Error('Connection is closed.'));
  try {
    const res = await fetch(`${gw.url}/readyz`);
    t.is(res.status, 503);
    const body = (await res.json()) as { checks: Record<string, string> };
    t.not(body.checks.redis, 'ok');
    t.is(body.checks.mongo, 'ok');
    t.is((await fetch(`${gw.url}/healthz`)).status, 200);
  } finally {
    (gw.deps.redis as { ping: () => Promise<string> }).ping = ping;
  }
});

test('not ready, naming Temporal, when Temporal does not answer; still alive', async (t) => {
  const gw = await startGateway({ TEMPORAL_ADDRESS: `127.0.0.1:${await deadPort()}` });
  gateways.push(gw);
  const res = await fetch(`${gw.url}/readyz`);
  t.is(res.status, 503);
  const body = (await res.json()) as { status: string; checks: Record<string, string> };
  t.is(body.status, 'not ready');
  t.is(body.checks.mongo, 'ok');
  t.is(body.checks.redis, 'ok');
  t.not(body.checks.temporal, 'ok');
  t.is((await fetch(`${gw.url}/healthz`)).status, 200);
  // Let the probe's gRPC deadline pass before the gateway is closed: the client's retries of the dead
  // server run until then, and one started on the closed channel fails outside any test.
  await new Promise((r) => setTimeout(r, 5_000));
});
