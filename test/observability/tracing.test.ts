// One trace from the HTTP request to the vendor, read from an in-memory
// exporter: a chat call (server span, route, ladder attempt, undici call to
// the simulator, Redis) and a media task (server span, workflow start, the
// workflow run in the sandbox, each activity, the upstream attempt inside it).
// Tracing starts before the stack is imported, as platform/tracing/register.ts does
// with --import in the real processes.
import test from 'ava';
import { register } from 'node:module';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTracing } from '../../platform/tracing/sdk';

register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
const exporter = new InMemorySpanExporter();
const tracing = startTracing({ serviceName: 'model-gateway-test', spanProcessors: [new SimpleSpanProcessor(exporter)] });
const { startGateway } = await import('../helpers/stack');
type TestGateway = Awaited<ReturnType<typeof startGateway>>;

let gw: TestGateway;
let key: string;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true });
  key = (await gw.newKey((await gw.newAccount()).id)).key;
});
test.after.always(async () => {
  await gw?.close();
  await tracing.shutdown();
});

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** The trace's spans as an indented tree, children in start order (what the docs show). */
function tree(spans: ReadableSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const kids = new Map<string | undefined, ReadableSpan[]>();
  for (const s of spans) {
    const p = parentOf(s);
    const key = p && ids.has(p) ? p : undefined;
    kids.set(key, [...(kids.get(key) ?? []), s]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    const children = (kids.get(parent) ?? []).sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    for (const s of children) {
      const attrs = ['gateway.channel', 'gateway.attempt', 'gateway.outcome', 'gateway.request_id', 'http.route', 'db.system', 'db.system.name']
        .filter((k) => s.attributes[k] !== undefined)
        .map((k) => `${k}=${String(s.attributes[k])}`);
      lines.push(`${'  '.repeat(depth)}${s.name}${attrs.length ? `  [${attrs.join(' ')}]` : ''}`);
      walk(s.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}

/** True when `descendant` sits under `ancestor` in `spans`. */
function under(spans: ReadableSpan[], descendant: ReadableSpan, ancestor: ReadableSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  for (let p = parentOf(descendant); p; p = byId.get(p) && parentOf(byId.get(p)!)) if (p === ancestor.spanContext().spanId) return true;
  return false;
}

async function traceOf(traceId: string, until: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
  for (let i = 0; i < 100; i++) {
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    if (until(spans)) return spans;
    await new Promise((r) => setTimeout(r, 100));
  }
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
}

test.serial('a chat call: one trace from the request through the ladder attempt to the upstream call; traceparent and x-gateway-trace name it', async (t) => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.1', messages: [{ role: 'user', content: 'Hello tracing' }], max_tokens: 5 }),
  });
  t.is(res.status, 200);
  await res.text();
  const requestId = res.headers.get('x-gateway-trace')!;
  const traceparent = res.headers.get('traceparent');
  t.regex(traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  const traceId = traceparent!.split('-')[1];
  const spans = await traceOf(traceId, (s) => s.some((x) => x.name.startsWith('POST /v1/chat/completions') && x.ended) && s.some((x) => x.name.startsWith('upstream attempt')));
  const server = spans.find((s) => s.kind === 1 && s.attributes['gateway.request_id'] === requestId);
  t.truthy(server, `server span with the request id:\n${tree(spans)}`);
  t.is(server!.attributes['http.route'], '/v1/chat/completions');
  t.is(parentOf(server!), undefined, 'the request starts the trace');
  const attempt = spans.find((s) => s.name === 'upstream attempt openai-a');
  t.truthy(attempt, tree(spans));
  t.is(attempt!.attributes['gateway.outcome'], 'ok');
  t.true(under(spans, attempt!, server!));
  const upstream = spans.find((s) => s.kind === 2 && String(s.attributes['url.full'] ?? '').startsWith(gw.simUrl!));
  t.truthy(upstream, `undici client span to the simulator:\n${tree(spans)}`);
  t.true(under(spans, upstream!, attempt!), 'the vendor call sits under its ladder attempt');
  t.true(spans.some((s) => s.name.startsWith('router - /v1/chat/completions')), 'the Koa route span');
  t.true(spans.some((s) => s.attributes['db.system'] === 'redis' || s.attributes['db.system.name'] === 'redis'), 'Redis calls of the request');
  t.log(`chat call ${requestId}, trace ${traceId}\n${tree(spans)}`);
});

test.serial('a media task: the request, the workflow start, the workflow run and its activities, and the upstream call share one trace', async (t) => {
  const res = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a traced fox', async: true }),
  });
  t.true(res.status < 300);
  const { id } = (await res.json()) as { id: string };
  const traceId = res.headers.get('traceparent')!.split('-')[1];
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${gw.url}/v1/images/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
    await r.body?.cancel();
    if (r.status !== 202) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // The run's span ends with the workflow and leaves the sandbox with its last activation.
  // A synchronous vendor: the submission settles the answer itself, as a span of its own under it.
  const spans = await traceOf(traceId, (s) => ['settle media task', 'RunWorkflow:mediaTaskWorkflow'].every((n) => s.some((x) => x.name === n)));
  const server = spans.find((s) => s.kind === 1 && s.attributes['http.route'] === '/v1/images/generations');
  t.truthy(server, tree(spans));
  const start = spans.find((s) => s.name === 'StartWorkflow:mediaTaskWorkflow');
  const run = spans.find((s) => s.name === 'RunWorkflow:mediaTaskWorkflow');
  const submit = spans.find((s) => s.name === 'RunActivity:submitAndSettleMediaTask');
  const settle = spans.find((s) => s.name === 'settle media task');
  const attempt = spans.find((s) => s.name.startsWith('upstream attempt'));
  for (const [name, span] of Object.entries({ start, run, submit, settle, attempt })) t.truthy(span, `${name} missing:\n${tree(spans)}`);
  t.true(under(spans, start!, server!), 'the workflow starts inside the request');
  t.true(under(spans, run!, start!), 'the run continues the start');
  t.true(under(spans, submit!, run!), 'activities run under the workflow');
  t.true(under(spans, settle!, submit!), 'the settlement runs in the submit activity');
  t.true(under(spans, attempt!, submit!), 'the vendor attempt runs in the submit activity');
  const vendor = spans.find((s) => s.kind === 2 && String(s.attributes['url.full'] ?? '').startsWith(gw.simUrl!) && under(spans, s, attempt!));
  t.truthy(vendor, `undici call to the vendor under the attempt:\n${tree(spans)}`);
  t.log(`media task ${id}, trace ${traceId}\n${tree(spans)}`);
});
