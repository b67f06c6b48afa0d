// Prometheus metrics against the real stack: a gateway and a worker in this
// process with metrics on, the simulator behind them; every series family of
// docs/observability.md is driven by real calls and read back from the
// metrics listener in the text format.
import test from 'ava';
import fs from 'node:fs';
import { enableMetrics } from '../../platform/metrics/index';
import { serveMetrics } from '../../platform/metrics/server';
import { watchStore } from '../../platform/metrics/store';
import { watchWorker } from '../../platform/metrics/temporal';
import { startGateway, type TestGateway } from '../helpers/stack';
import { createWorker } from '../../workers/worker';
import { auditWalletWorkflow } from '../../workflows';
import { addFault, post, setUsage, user } from '../chat/helpers';
import { parseProm, seriesOf, valueOf, type Sample } from './prom-text';
import { asyncLocalStorage as activityContext } from '@temporalio/activity';
import { alsRunsDuring } from '../helpers/als-runs';

// On before the app and the worker are built: they mount their hooks only when metrics are on.
const m = enableMetrics('gateway');
let gw: TestGateway;
let metricsUrl: string;
let account: { id: string };
let key: string;
let stopWorker: () => Promise<void>;

test.before(async () => {
  gw = await startGateway({}, { simulator: true, mediaDelayMs: 1500 });
  const { worker, connection } = await createWorker(gw.config, gw.deps);
  const running = worker.run();
  stopWorker = async () => {
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
  };
  watchWorker(m, worker);
  // Read the store at every scrape (10 s cache in production).
  watchStore(m, gw.deps.db, gw.deps.log, { readEveryMs: 0 });
  metricsUrl = (await serveMetrics(m.registry, 0, '127.0.0.1', gw.deps.log)).url;
  account = await gw.newAccount();
  key = (await gw.newKey(account.id)).key;
});
test.after.always(async () => {
  await stopWorker?.();
  await gw?.close();
});

async function scrape(): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(metricsUrl);
  if (res.status !== 200) throw new Error(`metrics answered ${res.status}`);
  if (!res.headers.get('content-type')?.startsWith('text/plain')) throw new Error(`content-type ${res.headers.get('content-type')}`);
  const text = await res.text();
  return { text, samples: parseProm(text) };
}

const chat = (body: Record<string, unknown> = {}, k = key) =>
  post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('Hello metrics'), max_tokens: 5, ...body }, { key: k });
const REQ = 'gateway_http_request_duration_seconds_count';

test.serial('a chat call with metrics on enters no AsyncLocalStorage (on Node 20 that would turn async hooks on for the process, for good)', async (t) => {
  // The in-process worker's activities (a sweep may run meanwhile) have their context in Temporal's own storage: not the gateway's.
  const runs = await alsRunsDuring(async () => {
    const r = await chat();
    t.is(r.status, 200, r.text);
    const s = await chat({ stream: true });
    t.is(s.status, 200, s.text);
  }, new Set([activityContext]));
  t.is(runs, 0, 'no AsyncLocalStorage context entered by a chat call or a streamed one');
});

test.serial('a chat call counts under its route template, protocol, model and status, with one upstream attempt and its time to first byte', async (t) => {
  const before = (await scrape()).samples;
  const r = await chat();
  t.is(r.status, 200, r.text);
  const after = (await scrape()).samples;
  const labels = { route: '/v1/chat/completions', protocol: 'chat-completions', model: 'gpt-5.1', status: '200', service: 'gateway' };
  t.is(valueOf(after, REQ, labels) - valueOf(before, REQ, labels), 1);
  t.true(valueOf(after, 'gateway_http_request_duration_seconds_sum', labels) > 0);
  const ok = { channel: 'openai-a', outcome: 'ok', failover: 'false' };
  t.is(valueOf(after, 'gateway_upstream_attempts_total', ok) - valueOf(before, 'gateway_upstream_attempts_total', ok), 1);
  t.is(valueOf(after, 'gateway_upstream_ttfb_seconds_count', { channel: 'openai-a' }) - valueOf(before, 'gateway_upstream_ttfb_seconds_count', { channel: 'openai-a' }), 1);
  t.is(valueOf(after, 'gateway_upstream_attempt_duration_seconds_count', { channel: 'openai-a', outcome: 'ok' }) - valueOf(before, 'gateway_upstream_attempt_duration_seconds_count', { channel: 'openai-a', outcome: 'ok' }), 1);
  // The chat charge is one wallet op.
  t.true(valueOf(after, 'gateway_wallet_ops_total', { kind: 'charge', result: 'applied' }) > valueOf(before, 'gateway_wallet_ops_total', { kind: 'charge', result: 'applied' }));
  t.true(valueOf(after, 'gateway_wallet_op_amount_credits_total', { kind: 'charge', direction: 'out' }) > 0);
});

test.serial('a failover counts the failed attempt by outcome and the next channel as a failover', async (t) => {
  await gw.control('POST', '/reset');
  await addFault(gw, 'openai-a', { type: 'status', status: 503 }, 1);
  const before = (await scrape()).samples;
  const r = await chat();
  t.is(r.status, 200, r.text);
  const after = (await scrape()).samples;
  const failed = { channel: 'openai-a', outcome: 'http_5xx', failover: 'false' };
  const next = { channel: 'openai-b', outcome: 'ok', failover: 'true' };
  t.is(valueOf(after, 'gateway_upstream_attempts_total', failed) - valueOf(before, 'gateway_upstream_attempts_total', failed), 1);
  t.is(valueOf(after, 'gateway_upstream_attempts_total', next) - valueOf(before, 'gateway_upstream_attempts_total', next), 1);
});

test.serial('a stream is open while it streams and counted when it closes; other protocols are labelled by theirs', async (t) => {
  const r = await chat({ stream: true });
  t.is(r.status, 200);
  const msg = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', messages: user('Hi'), max_tokens: 5 }, { key });
  t.is(msg.status, 200, msg.text);
  // The stream's socket closes a moment after the last byte.
  await new Promise((res) => setTimeout(res, 100));
  const { samples } = await scrape();
  t.is(valueOf(samples, 'gateway_http_streams_open'), 0);
  t.true(valueOf(samples, REQ, { route: '/v1/chat/completions', status: '200' }) >= 3);
  t.is(valueOf(samples, REQ, { route: '/v1/messages', protocol: 'messages', model: 'claude-sonnet-4-5', status: '200' }), 1);
});

test.serial('labels stay bounded: an unknown model is "unknown", an unmatched path is "unmatched", no ids appear', async (t) => {
  const r = await chat({ model: 'no-such-model-42' });
  t.is(r.status, 400, r.text);
  const lost = await fetch(`${gw.url}/v1/nothing/here/req_123456`);
  t.is(lost.status, 404);
  const { text, samples } = await scrape();
  t.is(valueOf(samples, REQ, { route: '/v1/chat/completions', model: 'unknown', status: '400' }), 1);
  t.true(valueOf(samples, REQ, { route: 'unmatched', status: '404' }) >= 1);
  t.false(text.includes('no-such-model-42'));
  t.false(text.includes('req_123456'));
  t.false(text.includes(account.id));
  t.false(text.includes(r.trace));
});

test.serial('usage the upstream under-reported is counted as estimated', async (t) => {
  await gw.control('POST', '/reset');
  await setUsage(gw, 'openai-a', { prompt_tokens: 0, output_tokens: 0 });
  const r = await chat();
  t.is(r.status, 200, r.text);
  await gw.control('POST', '/reset');
  const { samples } = await scrape();
  t.true(valueOf(samples, 'gateway_chat_usage_estimated_total', { channel: 'openai-a', model: 'gpt-5.1', reason: 'zero' }) >= 1);
});

test.serial('a stream cut before its usage came, billed on the estimate, is counted as estimated (reason interrupted)', async (t) => {
  await gw.control('POST', '/reset');
  await addFault(gw, 'openai-a', { type: 'cut', after_chunks: 3 }, 1);
  const r = await chat({ stream: true, max_tokens: 20 });
  t.is(r.status, 200);
  await gw.control('POST', '/reset');
  const { samples } = await scrape();
  t.true(valueOf(samples, 'gateway_chat_usage_estimated_total', { channel: 'openai-a', model: 'gpt-5.1', reason: 'interrupted' }) >= 1);
});

test.serial('rate-limit rejections are counted by limit', async (t) => {
  const limited = await gw.newAccount();
  const k = (await gw.newKey(limited.id)).key;
  const patched = await gw.admin('PATCH', `/accounts/${limited.id}`, { rate_limit: { rpm: 1 } });
  t.is(patched.status, 200, JSON.stringify(patched.body));
  t.is((await chat({}, k)).status, 200);
  const refused = await chat({}, k);
  t.is(refused.status, 429);
  const { samples } = await scrape();
  t.is(valueOf(samples, 'gateway_rate_limit_rejections_total', { reason: 'rpm' }), 1);
  t.true(valueOf(samples, REQ, { route: '/v1/chat/completions', status: '429' }) >= 1);
});

test.serial('a media task: in flight with its hold while it runs, then finished with its duration; idempotent replays and conflicts; worker slots and activities', async (t) => {
  const submit = (prompt: string) =>
    fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'metrics-1' },
      body: JSON.stringify({ model: 'gpt-image-1', prompt, async: true }),
    });
  const ttfbBefore = (await scrape()).samples;
  const first = await submit('a red fox');
  t.true(first.status < 300, await first.clone().text());
  const { id } = (await first.json()) as { id: string };
  const during = (await scrape()).samples;
  t.true(valueOf(during, 'gateway_media_tasks_in_flight', { family: 'image' }) >= 1);
  t.true(valueOf(during, 'gateway_wallet_holds_open') >= 1);
  t.true(valueOf(during, 'gateway_wallet_holds_open_credits') > 0);
  t.is(seriesOf(during, 'gateway_media_task_oldest_in_flight_seconds', { family: 'image' }).length, 1);
  t.is(valueOf(during, 'gateway_media_task_run_limit_seconds', { family: 'image' }), 280);

  const replay = await submit('a red fox');
  t.is(replay.headers.get('idempotency-replayed'), 'true');
  await replay.body?.cancel();
  const conflict = await submit('a blue fox');
  t.is(conflict.status, 409);
  await conflict.body?.cancel();

  let state = 202;
  for (let i = 0; i < 200 && state === 202; i++) {
    const r = await fetch(`${gw.url}/v1/images/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
    state = r.status;
    await r.body?.cancel();
    if (state === 202) await new Promise((res) => setTimeout(res, 100));
  }
  t.is(state, 200);
  const { text, samples } = await scrape();
  t.is(valueOf(samples, 'gateway_media_tasks_finished_total', { family: 'image', state: 'succeeded' }), 1);
  t.is(valueOf(samples, 'gateway_media_task_duration_seconds_count', { family: 'image', state: 'succeeded' }), 1);
  t.true(valueOf(samples, 'gateway_media_task_duration_seconds_sum', { family: 'image', state: 'succeeded' }) >= 1.5);
  t.is(valueOf(samples, 'gateway_idempotency_total', { outcome: 'replay' }), 1);
  t.is(valueOf(samples, 'gateway_idempotency_total', { outcome: 'conflict' }), 1);
  // The series' help names the status a conflict answers (409 above, spec 2 §4.1 item 8), so an operator reading it is not misled.
  t.regex(text, /# HELP gateway_idempotency_total .*conflict \(same key, other body: 409 idempotency_key_reuse\)/);
  t.is(valueOf(samples, 'gateway_wallet_ops_total', { kind: 'reserve', result: 'applied' }), 1);
  t.is(valueOf(samples, 'gateway_wallet_ops_total', { kind: 'settle', result: 'applied' }), 1);
  t.true(valueOf(samples, 'gateway_upstream_attempts_total', { outcome: 'ok', failover: 'false' }) >= 1);
  // The submission's attempt counted its request's time to first byte under the channel it climbed (MediaHttp.forAttempt).
  const ok = seriesOf(samples, 'gateway_upstream_attempts_total', { outcome: 'ok', failover: 'false' })
    .filter((x) => x.value > valueOf(ttfbBefore, 'gateway_upstream_attempts_total', { channel: x.labels.channel, outcome: 'ok', failover: 'false' }));
  t.is(ok.length, 1, 'one channel answered the task');
  const channel = ok[0].labels.channel;
  t.is(valueOf(samples, 'gateway_upstream_ttfb_seconds_count', { channel }) - valueOf(ttfbBefore, 'gateway_upstream_ttfb_seconds_count', { channel }), 1);
  // A synchronous vendor: one activity submits and settles.
  t.true(valueOf(samples, 'gateway_temporal_activity_duration_seconds_count', { activity: 'submitAndSettleMediaTask', outcome: 'ok' }) >= 1);
  t.true(valueOf(samples, 'gateway_temporal_worker_slots_max', { kind: 'activity' }) > 0);
  t.is(seriesOf(samples, 'gateway_temporal_worker_slots_used', { kind: 'activity' }).length, 1);
  t.false(text.includes(id), 'no task id in any label');
});

test.serial('a wallet audit is counted by its verdict; the event-loop lag and process series are there', async (t) => {
  const result = await gw.deps.temporal.workflow.execute(auditWalletWorkflow, {
    taskQueue: gw.config.TEMPORAL_TASK_QUEUE, workflowId: `audit-metrics-${Date.now()}`, args: [{ accountId: account.id, repair: false }],
  });
  t.is(result.driftNano, 0);
  const { text, samples } = await scrape();
  t.is(valueOf(samples, 'gateway_wallet_audits_total', { result: 'clean', repaired: 'false' }), 1);
  // The sample exposition in docs/ comes from here: METRICS_SAMPLE_OUT=docs/observability-sample-metrics.txt.
  if (process.env.METRICS_SAMPLE_OUT) fs.writeFileSync(process.env.METRICS_SAMPLE_OUT, text);
  t.is(seriesOf(samples, 'nodejs_eventloop_lag_seconds').length, 1);
  t.true(seriesOf(samples, 'nodejs_eventloop_lag_p99_seconds').length === 1);
  t.true(valueOf(samples, 'process_resident_memory_bytes') > 0);
});

test.serial('the metrics listener answers only GET /metrics; the public port has no /metrics', async (t) => {
  const other = await fetch(metricsUrl.replace('/metrics', '/other'));
  t.is(other.status, 404);
  await other.body?.cancel();
  const pub = await fetch(`${gw.url}/metrics`);
  t.is(pub.status, 404);
  await pub.body?.cancel();
});
