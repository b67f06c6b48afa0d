import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';

/**
 * The call log (docs/call-log.md): `GET /api/v1/logs/{request_id or task_id}`
 * shows a call of the key's account with its usage row and upstream
 * attempts (never the prompt); a task adds its state history, operators the
 * Temporal link. Other accounts' ids are 404.
 */
let gw: TestGateway;
const UI = 'http://temporal-ui.example:8233';
test.before(async () => {
  gw = await startGateway({ TEMPORAL_UI_URL: UI }, { simulator: true, worker: true });
});
test.after.always(async () => gw?.close());

async function account() {
  const a = await gw.newAccount();
  return { id: a.id, key: (await gw.newKey(a.id)).key };
}

async function logOf(id: string, auth: string): Promise<{ status: number; text: string; body: any }> {
  const r = await fetch(`${gw.url}/api/v1/logs/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${auth}` } });
  const text = await r.text();
  return { status: r.status, text, body: JSON.parse(text) };
}

test.serial('chat with a failover: both attempts (channel, status, latency), the usage row, no prompt; 404 for another account', async (t) => {
  await gw.control('POST', '/reset');
  const me = await account();
  const secret = `the prompt is private ${Math.random()}`;
  const fault = await gw.control('POST', '/faults', { channel: 'openai-a', fault: { type: 'status', status: 502 }, times: 1 });
  t.truthy(fault?.ok);
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${me.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.1', messages: [{ role: 'user', content: secret }], max_tokens: 5 }),
  });
  t.is(r.status, 200);
  const trace = r.headers.get('x-gateway-trace')!;
  await r.text();

  const log = await logOf(trace, me.key);
  t.is(log.status, 200, log.text);
  t.like(log.body, { object: 'call_log', id: trace, request_id: trace, task_id: null, task: null });
  t.like(log.body.usage, { id: trace, status: 'success', model: 'gpt-5.1', attempts_count: 2, request_id: trace });
  t.is(log.body.attempts.length, 2);
  t.like(log.body.attempts[0], { channel: 'openai-a', status: 502 });
  t.like(log.body.attempts[1], { channel: 'openai-b', status: 200 });
  for (const a of log.body.attempts) t.true(Number.isInteger(a.latency_ms) && a.latency_ms >= 0);
  t.false(log.text.includes(secret), 'the prompt is not in the log');
  t.is(log.body.workflow, undefined);

  const other = await account();
  t.is((await logOf(trace, other.key)).status, 404);
  t.is((await logOf('req_unknown', me.key)).status, 404);
  t.is((await logOf(trace, 'sk-mgateway-' + '0'.repeat(64))).status, 401);
  const op = await logOf(trace, gw.config.ADMIN_TOKEN);
  t.is(op.status, 200);
  t.is(op.body.usage.id, trace);
});

test.serial('a refused chat call is in the log too (no attempts)', async (t) => {
  const me = await account();
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${me.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
  });
  t.true(r.status >= 400);
  const trace = r.headers.get('x-gateway-trace')!;
  const log = await logOf(trace, me.key);
  t.is(log.status, 200, log.text);
  t.is(log.body.usage.status, 'rejected');
  t.deepEqual(log.body.attempts, []);
});

test.serial('an image task after a failover: the row, the attempts, the state history; by task id and by request id; operators get the workflow link', async (t) => {
  await gw.control('POST', '/media/faults', { channel: 'openai-images-a', fault: { type: 'submit_status', status: 503 }, times: 1 });
  const me = await account();
  const prompt = `private image prompt ${Math.random()}`;
  const sub = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST', headers: { authorization: `Bearer ${me.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt, async: true }),
  });
  t.is(sub.status, 200);
  const requestId = sub.headers.get('x-gateway-trace')!;
  const { id } = (await sub.json()) as { id: string };
  for (let i = 0; i < 200; i++) {
    const p = await fetch(`${gw.url}/v1/images/generations/${id}`, { headers: { authorization: `Bearer ${me.key}` } });
    await p.text();
    if (p.status !== 202) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  const log = await logOf(id, me.key);
  t.is(log.status, 200, log.text);
  t.like(log.body, { object: 'call_log', id, task_id: id, request_id: requestId });
  t.like(log.body.usage, { status: 'success', task_id: id, attempts_count: 2 });
  t.deepEqual(log.body.attempts.map((a: any) => [a.channel, a.status]), [['openai-images-a', 503], ['openai-images-b', 200]]);
  t.like(log.body.task, { id, kind: 'image', endpoint: 'generations', status: 'succeeded', webhook: null });
  const states = log.body.task.state_history.map((s: any) => s.state);
  t.is(states[0], 'queued');
  t.is(states.at(-1), 'succeeded');
  const times = log.body.task.state_history.map((s: any) => Date.parse(s.at));
  t.deepEqual([...times].sort((a, b) => a - b), times, 'in time order');
  t.false(log.text.includes(prompt), 'the prompt is not in the log');
  t.is(log.body.workflow, undefined, 'no Temporal link for a key');

  const byRequest = await logOf(requestId, me.key);
  t.is(byRequest.body.task_id, id);

  const op = await logOf(id, gw.config.ADMIN_TOKEN);
  t.deepEqual(op.body.workflow, { id, url: `${UI}/namespaces/default/workflows/${id}` });

  const other = await account();
  t.is((await logOf(id, other.key)).status, 404);
  t.is((await logOf(requestId, other.key)).status, 404);

  // The console's lookup (a person managing several accounts, or an operator) reads the same row by primary key.
  const { CallLog } = await import('../../capabilities/calllog/service');
  const calls = new CallLog(gw.deps);
  for (const key of [id, requestId]) {
    t.is((await calls.row(key, [other.id, me.id]))?._id, id, `${key} among two accounts`);
    t.is((await calls.row(key, null))?._id, id, `${key} for an operator`);
    t.is(await calls.row(key, [other.id]), null, `${key} is not the other account's`);
  }
});

test.serial('a usage row is stored without its default fields and read with them (the call log, lean reads, queries for a default)', async (t) => {
  const me = await account();
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${me.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });
  t.is(r.status, 200);
  const trace = r.headers.get('x-gateway-trace')!;
  await r.text();
  const log = await logOf(trace, me.key); // reads flush the journal first
  t.is(log.status, 200, log.text);
  const stored = (await gw.deps.db.Usage.collection.findOne({ _id: trace } as never)) as Record<string, unknown> | null;
  t.truthy(stored);
  for (const f of ['error_code', 'error_message', 'task_id', 'submitted_at', 'result_urls', 'result_expires_at', 'reserved_nano']) t.false(f in stored!, `${f} is not stored`);
  t.like(stored, { _id: trace, status: 'success', model: 'gpt-5.1' });
  t.like(log.body.usage, { error_code: null, error_message: null, task_id: null, submitted_at: null });
  const lean = await gw.deps.db.Usage.findById(trace).lean();
  t.like(lean, { error_code: null, task_id: null, result_urls: [], cached_tokens: 0, usage_estimated: false, attempts_count: 1 });
  t.is((await gw.deps.db.Usage.find({ _id: trace, task_id: null }).lean()).length, 1, 'a query for a default matches a row without the field');
});
