// Channel health: the circuit breaker opens on a failing channel and traffic
// fails over without touching it, a probe after the cool-down closes it, and
// "test this channel" sends one small real request.
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { addFault, post, upstreamCount, usageRow, user } from '../chat/helpers';
import { channelBreakerStates } from '../../capabilities/catalogue/channel-health';

/**
 * Long enough that a loaded machine finishes each open phase inside it, and
 * that three concurrent media workflows' first submissions (whose start a
 * busy worker may spread over seconds) still fall within one cool-down of
 * each other, so they count as one streak (4 s was not: a full suite at load
 * 11 saw the streak reset and the breaker stay closed).
 */
const COOL_DOWN_MS = 10_000;

let gw: TestGateway;
let key: string;
test.before(async () => {
  gw = await startGateway({ CHANNEL_BREAKER_FAILURES: '3', CHANNEL_BREAKER_COOLDOWN_MS: String(COOL_DOWN_MS) }, { simulator: true, worker: true });
  key = (await gw.newKey((await gw.newAccount()).id)).key;
});
test.after.always(async () => gw?.close());
test.beforeEach(async () => {
  await gw.control('POST', '/reset');
});

const chat = (model: string) => post(gw, '/v1/chat/completions', { model, messages: user('breaker'), max_tokens: 5 }, { key });
const health = async (id: string) => (await gw.admin('GET', `/channels/${id}`)).body;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test.serial('consecutive 5xx open the breaker; traffic fails over past it; after the cool-down a probe closes it', async (t) => {
  await addFault(gw, 'deepseek-a', { type: 'status', status: 500 }, 3);
  for (let i = 0; i < 3; i++) {
    const r = await chat('deepseek-v3.2');
    t.is(r.status, 200, r.text);
    t.is((await usageRow(gw, r.trace)).attempts_count, 2);
  }
  t.deepEqual([await upstreamCount(gw, 'deepseek-a'), await upstreamCount(gw, 'deepseek-b')], [3, 3]);
  const open = await health('deepseek-a');
  t.is(open.health.state, 'open');
  t.is(open.health.consecutive_failures, 3);
  t.regex(open.health.last_failure, /500/);
  // Every process's view, as reported to Redis.
  t.is(open.health_by_process.length, 1);
  t.is(open.health_by_process[0].state, 'open');
  t.true(channelBreakerStates().some((s) => s.channel === 'deepseek-a' && s.state === 'open'));

  // Open: requests go to deepseek-b first, one attempt each; deepseek-a is not touched.
  const traces: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await chat('deepseek-r1');
    t.is(r.status, 200);
    traces.push(r.trace);
  }
  for (const trace of traces) t.is((await usageRow(gw, trace)).attempts_count, 1);
  t.is(await upstreamCount(gw, 'deepseek-a'), 3);
  t.is(await upstreamCount(gw, 'deepseek-b'), 6);

  // After the cool-down: half-open; the next request probes deepseek-a (now healthy) and closes it.
  await sleep(COOL_DOWN_MS + 100);
  t.is((await health('deepseek-a')).health.state, 'half_open');
  const probe = await chat('deepseek-v3.2');
  t.is(probe.status, 200);
  t.is(await upstreamCount(gw, 'deepseek-a'), 4);
  const closed = await health('deepseek-a');
  t.is(closed.health.state, 'closed');
  t.is(closed.health.consecutive_failures, 0);
  t.is(closed.health_by_process[0].state, 'closed');
  t.is((await chat('deepseek-v3.2')).status, 200);
  t.is(await upstreamCount(gw, 'deepseek-a'), 5);
});

test.serial('a failed probe opens the breaker again; connection resets count as failures', async (t) => {
  await addFault(gw, 'qwen-a', { type: 'reset' }, 4);
  for (let i = 0; i < 3; i++) t.is((await chat('qwen3-max')).status, 200);
  t.is((await health('qwen-a')).health.state, 'open');
  await sleep(COOL_DOWN_MS + 100);
  t.is((await chat('qwen3-max')).status, 200); // probe: reset (4th fault), then qwen-b answers
  t.is(await upstreamCount(gw, 'qwen-a'), 4);
  const h = (await health('qwen-a')).health;
  t.is(h.state, 'open');
  t.is(h.opens, 2);
  t.is((await chat('qwen3-max')).status, 200);
  t.is(await upstreamCount(gw, 'qwen-a'), 4);
});

test.serial('4xx answers do not open the breaker; with every channel open, requests still try them', async (t) => {
  await addFault(gw, 'xai-a', { type: 'status', status: 400 }, 5);
  for (let i = 0; i < 5; i++) t.is((await chat('grok-4-fast')).status, 400);
  t.is((await health('xai-a')).health.state, 'closed');

  for (const id of ['gemini-a', 'gemini-b', 'gemini-c']) await addFault(gw, id, { type: 'status', status: 503 }, 3);
  for (let i = 0; i < 3; i++) t.is((await chat('gemini-2.5-flash')).status, 503);
  for (const id of ['gemini-a', 'gemini-b', 'gemini-c']) t.is((await health(id)).health.state, 'open');
  // No healthy channel left: the open ones are still tried (the breaker only reorders), and the upstream has recovered.
  const r = await chat('gemini-2.5-flash');
  t.is(r.status, 200, r.text);
  t.is((await health('gemini-a')).health.state, 'closed');
});

test.serial('media submissions fail over past an open channel too', async (t) => {
  await gw.control('POST', '/media/reset');
  const armed = await gw.control('POST', '/media/faults', { channel: 'suno-a', fault: { type: 'submit_status', status: 502 }, times: 3 });
  t.truthy(armed);
  const touched = async (channel: string) => {
    const r = await gw.control('GET', `/media/tasks?channel=${channel}`);
    return r.tasks.length + r.rejected.filter((x: any) => x.channel === channel).length;
  };
  const submit = () => post(gw, '/v1/music/generations', { model: 'suno-v4-5', prompt: '[Verse]\nA breaker song', title: 'Breaker', tags: 'lofi' }, { key });
  // Three at once (failures further apart than a cool-down would not chain): each workflow climbs suno-a (502), then suno-b.
  for (const r of await Promise.all([submit(), submit(), submit()])) t.is(r.status, 200);
  const until = Date.now() + 15_000;
  while ((await touched('suno-b')) < 3 && Date.now() < until) await sleep(50);
  t.is(await touched('suno-a'), 3);
  t.is((await health('suno-a')).health.state, 'open');
  const r = await submit();
  t.is(r.status, 200, r.text);
  // Wait for the task's own record of the channel that accepted it (a loaded machine may take a while).
  const deadline = Date.now() + 60_000;
  let task = await gw.deps.db.Task.findById(r.json.id).lean();
  while (!task?.upstream?.channel && Date.now() < deadline) {
    await sleep(100);
    task = await gw.deps.db.Task.findById(r.json.id).lean();
  }
  t.is(task!.upstream!.channel, 'suno-b');
  t.is(task!.upstream!.attempts, 1);
  t.is(await touched('suno-a'), 3, 'the open channel was not tried');
});

test.serial('a task keeps polling the channel that accepted it after that channel is disabled', async (t) => {
  await gw.control('POST', '/media/reset');
  // The first polls fail (retried by the activity): time to disable the channel while the task is in flight.
  await gw.control('POST', '/media/faults', { channel: 'ark-video-a', fault: { type: 'poll_fail', count: 3 } });
  const r = await post(gw, '/v1/videos/generations', { model: 'seedance-1-0-pro', content: [{ type: 'text', text: 'a channel leaves mid-task' }] }, { key });
  t.is(r.status, 200, r.text);
  const id = r.json.id;
  const deadline = Date.now() + 15_000;
  while (!(await gw.deps.db.Task.findById(id).lean())?.upstream?.task_id && Date.now() < deadline) await sleep(20);
  t.is((await gw.deps.db.Task.findById(id).lean())!.upstream!.channel, 'ark-video-a');
  t.is((await gw.admin('PATCH', '/channels/ark-video-a', { enabled: false })).status, 200);
  try {
    let task = await gw.deps.db.Task.findById(id).lean();
    while (!['succeeded', 'failed'].includes(task!.state) && Date.now() < deadline + 30_000) {
      await sleep(100);
      task = await gw.deps.db.Task.findById(id).lean();
    }
    t.is(task!.state, 'succeeded', JSON.stringify({ error: task!.error_code, message: task!.error_message }));
  } finally {
    await gw.admin('PATCH', '/channels/ark-video-a', { enabled: true });
  }
});

test.serial('test this channel: one small real request, its status, latency and answer', async (t) => {
  const ok = await gw.admin('POST', '/channels/openai-b/test', {});
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.like(ok.body, { object: 'channel_test', channel: 'openai-b', ok: true, status: 200, model: 'gpt-5.1', adapter: 'chat-completions', protocol: 'chat-completions', error: null });
  t.true(ok.body.latency_ms >= 0);
  t.true(ok.body.snippet.length > 0);
  const sent = (await gw.control('GET', '/requests?channel=openai-b')).requests.at(-1);
  t.is(sent.body.max_tokens, 16);

  // Another model and wire format, on request.
  const msg = await gw.admin('POST', '/channels/anthropic-c/test', { model: 'claude-haiku-4-5' });
  t.like(msg.body, { ok: true, status: 200, model: 'claude-haiku-4-5', adapter: 'messages', protocol: 'messages' });
  const gem = await gw.admin('POST', '/channels/gemini-c/test');
  t.like(gem.body, { ok: true, status: 200, adapter: 'generate-content' });

  // A failing upstream: its status and body.
  await addFault(gw, 'openai-c', { type: 'status', status: 503 }, 1);
  const bad = await gw.admin('POST', '/channels/openai-c/test', {});
  t.like(bad.body, { ok: false, status: 503 });
  t.truthy(bad.body.error);
  // Unreachable: no status, the connection error.
  await gw.admin('POST', '/channels', {
    id: 'nowhere', vendor: 'openai', adapter: 'chat-completions', base_url: 'http://127.0.0.1:1', credentials: { none: true }, models: ['gpt-4.1'], enabled: false,
  });
  const down = await gw.admin('POST', '/channels/nowhere/test', {});
  t.like(down.body, { ok: false, status: null });
  t.regex(down.body.error, /connection/);
  // A media channel: a status lookup of a task that does not exist reaches the vendor.
  const media = await gw.admin('POST', '/channels/ark-video-a/test', {});
  t.is(media.status, 200, JSON.stringify(media.body));
  t.is(media.body.adapter, 'ark-video');
  t.true(media.body.status !== null, JSON.stringify(media.body));
  // Models the channel does not serve, unknown channels.
  t.is((await gw.admin('POST', '/channels/openai-b/test', { model: 'claude-haiku-4-5' })).status, 400);
  t.is((await gw.admin('POST', '/channels/missing/test', {})).status, 404);
});
