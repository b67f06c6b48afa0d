// The real gateway process as an operator starts it (`--import ./platform/tracing/register.ts`,
// package.json's gateway script), with metrics and tracing turned on by
// environment only: METRICS_PORT, and the standard OTEL_* variables pointing
// at an OTLP/HTTP receiver in this test (JSON protocol). A chat call must be
// counted on /metrics and exported as spans carrying its x-gateway-trace.
import test from 'ava';
import http from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { freePort } from '../../dev/scripts/lib/proc';
import { testConfig } from '../helpers/stack';
import { connectStore } from '../../capabilities/store';
import { readCatalogueFile, seedCatalogue } from '../../capabilities/catalogue/records';
import { createSimulator, type Simulator } from '../../dev/simulator/app';
import { parseProm, valueOf } from './prom-text';

interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: Array<{ key: string; value: Record<string, unknown> }> }
const received: OtlpSpan[] = [];
let receiver: http.Server;
let sim: Simulator;
let child: ChildProcess | undefined;
let gwUrl: string;
let metricsUrl: string;
let adminToken: string;
let mongoUrl: string;

test.before(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const doc = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) received.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  sim = createSimulator();
  const simUrl = await sim.listen(0, '127.0.0.1');

  const config = testConfig({ SIMULATOR_URL: simUrl });
  adminToken = config.ADMIN_TOKEN;
  mongoUrl = config.MONGO_URL;
  const db = await connectStore(config.MONGO_URL);
  await seedCatalogue(db, readCatalogueFile(config.CATALOGUE_FILE));
  await db.conn.close();

  const port = await freePort();
  const metricsPort = await freePort();
  gwUrl = `http://127.0.0.1:${port}`;
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  child = spawn(process.execPath, ['--import', 'tsx', '--import', './platform/tracing/register.ts', 'gateway/server.ts'], {
    env: {
      ...process.env,
      MONGO_URL: config.MONGO_URL, REDIS_URL: config.REDIS_URL, REDIS_PREFIX: config.REDIS_PREFIX, TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: config.ADMIN_TOKEN, KEY_ENCRYPTION_KEY: config.KEY_ENCRYPTION_KEY,
      SIMULATOR_URL: simUrl, PORT: String(port), LOG_LEVEL: 'silent',
      METRICS_PORT: String(metricsPort),
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'gateway-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    const up = await fetch(`${gwUrl}/healthz`).then((r) => r.status, () => 0);
    if (up === 200) break;
    if (i > 600 || child.exitCode !== null) throw new Error(`gateway did not start (exit ${child.exitCode})`);
    await new Promise((r) => setTimeout(r, 100));
  }
});

test.after.always(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  const db = await connectStore(mongoUrl);
  await db.conn.dropDatabase().catch(() => undefined);
  await db.conn.close();
  await sim?.close();
  receiver?.close();
});

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};

test('a gateway started with the preload, METRICS_PORT and OTEL_* counts the call and exports its trace', async (t) => {
  const admin = async (path: string, body: unknown) => {
    const r = await fetch(`${gwUrl}/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await r.json()) as any;
  };
  const account = await admin('/accounts', { name: 'otel' });
  const { key } = await admin(`/accounts/${account.id}/keys`, { name: 'k' });
  const res = await fetch(`${gwUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.1', messages: [{ role: 'user', content: 'Hello from a real process' }], max_tokens: 5 }),
  });
  t.is(res.status, 200);
  await res.text();
  const requestId = res.headers.get('x-gateway-trace')!;
  const traceId = res.headers.get('traceparent')?.split('-')[1];
  t.regex(traceId ?? '', /^[0-9a-f]{32}$/);

  const samples = parseProm(await (await fetch(metricsUrl)).text());
  t.is(valueOf(samples, 'gateway_http_request_duration_seconds_count', { route: '/v1/chat/completions', protocol: 'chat-completions', model: 'gpt-5.1', status: '200' }), 1);
  t.is(valueOf(samples, 'gateway_upstream_attempts_total', { channel: 'openai-a', outcome: 'ok' }), 1);

  let trace: OtlpSpan[] = [];
  for (let i = 0; i < 100; i++) {
    trace = received.filter((s) => s.traceId === traceId);
    if (trace.some((s) => attr(s, 'gateway.request_id') === requestId) && trace.some((s) => s.name === 'upstream attempt openai-a')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const server = trace.find((s) => attr(s, 'gateway.request_id') === requestId);
  t.truthy(server, `spans received: ${received.map((s) => s.name).join(', ')}`);
  t.falsy(server?.parentSpanId, 'the request span is the root');
  t.truthy(trace.find((s) => s.name === 'upstream attempt openai-a'));
  t.true(trace.some((s) => attr(s, 'db.system.name') === 'redis' || attr(s, 'db.system') === 'redis'), 'ioredis is instrumented through the preload');
  t.true(trace.some((s) => s.name.startsWith('router - ')), 'koa is instrumented through the preload');
});
