// Channel ladder and upstream errors, driven by the simulator's fault API:
// failover on 5xx / connection failures (3 channels at most), 4xx passed
// through unretried, no retry after the first byte, the upstream timeout.
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { ANTHROPIC_ERROR_FRAME } from '../../dev/simulator/chat/anthropic-messages';
import { addFault, post, sseEvents, upstreamCount, usageRow, user } from './helpers';

let gw: TestGateway;
let key: string;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  key = (await gw.newKey((await gw.newAccount()).id)).key;
});
test.after.always(async () => gw?.close());
test.beforeEach(async () => {
  await gw.control('POST', '/reset');
});

const chat = (body: Record<string, unknown> = {}) => post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('Hello failover'), max_tokens: 5, ...body }, { key });
const counts = async (...channels: string[]) => Promise.all(channels.map((c) => upstreamCount(gw, c)));
const OPENAI = ['openai-a', 'openai-b', 'openai-c'];

test.serial('one failing channel (5xx): the next one answers; one usage row with attempts_count 2', async (t) => {
  await addFault(gw, 'openai-a', { type: 'status', status: 500 }, 1);
  const r = await chat();
  t.is(r.status, 200, r.text);
  t.is(r.json.object, 'chat.completion');
  t.deepEqual(await counts(...OPENAI), [1, 1, 0]);
  const row = await usageRow(gw, r.trace);
  t.is(row.status, 'success');
  t.is(row.attempts_count, 2);
  t.true(row.cost_nano > 0);
  t.is(await gw.deps.db.Usage.countDocuments({ request_id: r.trace }), 1);
});

test.serial('one failing channel (connection reset), streaming: the next one streams; attempts_count 2', async (t) => {
  await addFault(gw, 'openai-a', { type: 'reset' }, 1);
  const r = await chat({ stream: true });
  t.is(r.status, 200);
  t.is(sseEvents(r.text).at(-1)?.data, '[DONE]');
  t.deepEqual(await counts(...OPENAI), [1, 1, 0]);
  t.is((await usageRow(gw, r.trace)).attempts_count, 2);
});

test.serial('two failing channels (reset, 503): the third answers; attempts_count 3', async (t) => {
  await addFault(gw, 'openai-a', { type: 'reset' }, 1);
  await addFault(gw, 'openai-b', { type: 'status', status: 503 }, 1);
  const r = await chat();
  t.is(r.status, 200, r.text);
  t.deepEqual(await counts(...OPENAI), [1, 1, 1]);
  const row = await usageRow(gw, r.trace);
  t.is(row.status, 'success');
  t.is(row.attempts_count, 3);
  t.is(await gw.deps.db.Usage.countDocuments({ request_id: r.trace }), 1);
});

test.serial('failover on every endpoint: messages, responses, generate-content, translated chat', async (t) => {
  await addFault(gw, 'anthropic-a', { type: 'status', status: 529 }, 2);
  await addFault(gw, 'anthropic-b', { type: 'reset' }, 1);
  const m = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 4, messages: user('hi') }, { key });
  t.is(m.status, 200, m.text);
  t.is(m.json.type, 'message');
  t.is((await usageRow(gw, m.trace)).attempts_count, 3);
  // anthropic-a has one 529 left: the translated chat-completions request fails over too.
  const c = await chat({ model: 'claude-sonnet-4-5' });
  t.is(c.status, 200, c.text);
  t.is(c.headers.get('x-protocol-translation'), 'chat-completions_to_messages');
  t.is((await usageRow(gw, c.trace)).attempts_count, 2);

  await addFault(gw, 'openai-resp-a', { type: 'status', status: 502 }, 1);
  const r = await post(gw, '/v1/responses', { model: 'gpt-5.1', input: 'hi', stream: true, max_output_tokens: 50 }, { key });
  t.is(r.status, 200);
  t.is(sseEvents(r.text).at(-1)?.event, 'response.completed');
  t.is((await usageRow(gw, r.trace)).attempts_count, 2);

  await addFault(gw, 'gemini-a', { type: 'reset' }, 1);
  const g = await post(gw, '/v1beta/models/gemini-2.5-pro:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, { key });
  t.is(g.status, 200, g.text);
  t.is((await usageRow(gw, g.trace)).attempts_count, 2);
  t.deepEqual(await counts('gemini-a', 'gemini-b', 'gemini-c'), [1, 1, 0]);
});

test.serial('three failing channels (5xx): the last status passes through as upstream_error / api_error; one error row', async (t) => {
  await addFault(gw, 'openai-a', { type: 'status', status: 500 }, 1);
  await addFault(gw, 'openai-b', { type: 'reset' }, 1);
  await addFault(gw, 'openai-c', { type: 'status', status: 503 }, 1);
  const r = await chat();
  t.is(r.status, 503, r.text);
  t.is(r.json.error.code, 'upstream_error');
  t.is(r.json.error.type, 'api_error');
  t.deepEqual(await counts(...OPENAI), [1, 1, 1]);
  const row = await usageRow(gw, r.trace);
  t.is(row.status, 'error');
  t.is(row.attempts_count, 3);
  t.is(row.cost_nano, 0);
  t.is(row.error_code, 'upstream_error');
  t.is(await gw.deps.db.Usage.countDocuments({ request_id: r.trace }), 1);
  t.is(await gw.deps.db.Ledger.countDocuments({ _id: `${r.trace}:charge` }), 0);

  // In the messages and generate-content shapes.
  for (const ch of ['anthropic-a', 'anthropic-b', 'anthropic-c']) await addFault(gw, ch, { type: 'status', status: 500 }, 1);
  const m = await post(gw, '/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 4, messages: user('hi') }, { key });
  t.is(m.status, 500);
  t.is(m.json.type, 'error');
  t.is(m.json.error.type, 'api_error');
  for (const ch of ['gemini-a', 'gemini-b', 'gemini-c']) await addFault(gw, ch, { type: 'status', status: 503 }, 1);
  const g = await post(gw, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, { key });
  t.is(g.status, 503);
  t.is(g.json.error.code, 503);
  t.is(g.json.error.status, 'UNAVAILABLE');
});

test.serial('all channels reset: 502 upstream_unreachable in each shape', async (t) => {
  for (const ch of OPENAI) await addFault(gw, ch, { type: 'reset' }, 1);
  const r = await chat({ stream: true });
  t.is(r.status, 502, r.text);
  t.is(r.json.error.code, 'upstream_unreachable');
  t.is(r.json.error.type, 'api_error');
  t.deepEqual(await counts(...OPENAI), [1, 1, 1]);
  t.is((await usageRow(gw, r.trace)).attempts_count, 3);

  for (const ch of ['anthropic-a', 'anthropic-b', 'anthropic-c']) await addFault(gw, ch, { type: 'reset' }, 1);
  const m = await post(gw, '/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 4, messages: user('hi') }, { key });
  t.is(m.status, 502);
  t.is(m.json.error.type, 'api_error');
  for (const ch of ['gemini-a', 'gemini-b', 'gemini-c']) await addFault(gw, ch, { type: 'reset' }, 1);
  const g = await post(gw, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, { key });
  t.is(g.status, 502);
  t.is(g.json.error.status, 'UNAVAILABLE');
});

const PASSTHROUGH: [number, string, string][] = [
  [400, 'invalid_request', 'invalid_request_error'],
  [422, 'invalid_request', 'invalid_request_error'],
  [401, 'invalid_api_key', 'authentication_error'],
  [403, 'permission_denied', 'permission_error'],
  [404, 'not_found', 'invalid_request_error'],
  [429, 'rate_limit_exceeded', 'rate_limit_error'],
];

for (const [status, code, type] of PASSTHROUGH) {
  test.serial(`upstream ${status}: not retried, passes through as ${code}`, async (t) => {
    const message = `upstream says ${status}`;
    await addFault(gw, 'openai-a', { type: 'status', status, body: { error: { message, type: 'x', code: null } } }, 1);
    const r = await chat();
    t.is(r.status, status, r.text);
    t.is(r.json.error.code, code);
    t.is(r.json.error.type, type);
    t.true(r.json.error.message.includes(message), r.json.error.message);
    t.deepEqual(await counts(...OPENAI), [1, 0, 0]);
    const row = await usageRow(gw, r.trace);
    t.is(row.attempts_count, 1);
    t.is(row.cost_nano, 0);
  });
}

test.serial('upstream 429 with Retry-After and x-ratelimit-* (a platform limit): headers passed through', async (t) => {
  const headers = { 'retry-after': '7', 'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '7s' };
  await addFault(gw, 'openai-a', { type: 'status', status: 429, headers }, 1);
  const r = await chat();
  t.is(r.status, 429);
  t.is(r.json.error.code, 'rate_limit_exceeded');
  for (const [k, v] of Object.entries(headers)) t.is(r.headers.get(k), v, k);
  t.deepEqual(await counts(...OPENAI), [1, 0, 0]);

  // Without them (an upstream-side limit): no such headers invented.
  await addFault(gw, 'openai-a', { type: 'status', status: 429 }, 1);
  const bare = await chat();
  t.is(bare.status, 429);
  t.is(bare.json.error.code, 'rate_limit_exceeded');
  t.is(bare.headers.get('retry-after'), null);
  t.is(bare.headers.get('x-ratelimit-limit-requests'), null);

  // In the other two shapes.
  await addFault(gw, 'anthropic-a', { type: 'status', status: 429, headers: { 'retry-after': '3' } }, 1);
  const m = await post(gw, '/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 4, messages: user('hi') }, { key });
  t.is(m.status, 429);
  t.is(m.json.error.type, 'rate_limit_error');
  t.is(m.headers.get('retry-after'), '3');
  await addFault(gw, 'gemini-a', { type: 'status', status: 429 }, 1);
  const g = await post(gw, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, { key });
  t.is(g.status, 429);
  t.is(g.json.error.code, 429);
  t.is(g.json.error.status, 'RESOURCE_EXHAUSTED');
  t.deepEqual(await counts('gemini-a', 'gemini-b'), [1, 0]);
});

/** One streamed call in each protocol (chat-completions, messages, generate-content), each first channel cut after that many chunks. */
async function streamsCutAfter(openai: number, anthropic: number, gemini: number) {
  await addFault(gw, 'openai-a', { type: 'cut', after_chunks: openai }, 1);
  const r = await chat({ stream: true, max_tokens: 20 });
  await addFault(gw, 'anthropic-a', { type: 'cut', after_chunks: anthropic }, 1);
  const m = await post(gw, '/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 20, stream: true, messages: user('hi') }, { key });
  await addFault(gw, 'gemini-a', { type: 'cut', after_chunks: gemini }, 1);
  const g = await post(gw, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 10 } }, { key });
  return { r, m, g };
}

test.serial('no retry after the first byte: a stream cut after K chunks ends, the next channel sees no request', async (t) => {
  const { r, m, g } = await streamsCutAfter(4, 5, 2);
  t.is(r.status, 200);
  t.is(sseEvents(r.text).length, 4);
  t.deepEqual(await counts(...OPENAI), [1, 0, 0]);
  const row = await usageRow(gw, r.trace);
  t.is(row.status, 'interrupted');
  t.is(row.attempts_count, 1);
  t.is(m.status, 200);
  t.false(m.text.includes('message_stop'));
  t.deepEqual(await counts('anthropic-a', 'anthropic-b'), [1, 0]);
  t.is(sseEvents(g.text).length, 2);
  t.deepEqual(await counts('gemini-a', 'gemini-b'), [1, 0]);
});

test.serial('an upstream error frame inside a messages stream is forwarded unchanged; no retry', async (t) => {
  await addFault(gw, 'anthropic-a', { type: 'error_frame', after_chunks: 4 }, 1);
  const m = await post(gw, '/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 20, stream: true, messages: user('hi') }, { key });
  const events = sseEvents(m.text);
  const last = events.at(-1)!;
  t.is(last.event, 'error');
  t.true(m.text.endsWith(ANTHROPIC_ERROR_FRAME), 'the frame byte for byte');
  t.is(JSON.parse(last.data).error.type, 'overloaded_error');
  t.deepEqual(await counts('anthropic-a', 'anthropic-b'), [1, 0]);
  t.is((await usageRow(gw, m.trace)).status, 'interrupted');
});

test.serial('a stream cut before its first chunk (nothing reached the client yet) fails over, in each protocol', async (t) => {
  const { r, m, g } = await streamsCutAfter(0, 0, 0);
  t.is(r.status, 200);
  t.true(r.text.includes('data: [DONE]'), r.text);
  t.deepEqual(await counts(...OPENAI), [1, 1, 0]);
  const row = await usageRow(gw, r.trace);
  t.is(row.status, 'success');
  t.is(row.attempts_count, 2);
  t.is(m.status, 200);
  t.true(m.text.includes('message_stop'), m.text);
  t.deepEqual(await counts('anthropic-a', 'anthropic-b'), [1, 1]);
  t.is(g.status, 200);
  t.true(sseEvents(g.text).length > 0, g.text);
  t.deepEqual(await counts('gemini-a', 'gemini-b'), [1, 1]);
});

test.serial('a non-streamed body cut short (nothing reached the client yet) fails over', async (t) => {
  await addFault(gw, 'openai-a', { type: 'cut', after_chunks: 0 }, 1);
  const r = await chat();
  t.is(r.status, 200, r.text);
  t.is(r.json.object, 'chat.completion');
  t.deepEqual(await counts(...OPENAI), [1, 1, 0]);
  t.is((await usageRow(gw, r.trace)).attempts_count, 2);
});

// ---------------------------------------------------------------- timeout (a gateway of its own with a short deadline)

test.serial('upstream timeout: 504 upstream_timeout, no other channel tried; a stream outliving it just ends', async (t) => {
  const fast = await startGateway({ CHAT_UPSTREAM_TIMEOUT_MS: '1500' }, { simulator: true });
  t.teardown(() => fast.close());
  const k = (await fast.newKey((await fast.newAccount()).id)).key;
  await addFault(fast, 'openai-a', { type: 'hang' }, 1);
  const t0 = performance.now();
  const r = await post(fast, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('hi'), max_tokens: 5 }, { key: k });
  const took = performance.now() - t0;
  t.is(r.status, 504, r.text);
  t.is(r.json.error.code, 'upstream_timeout');
  t.is(r.json.error.type, 'api_error');
  t.true(took >= 1400 && took < 5000, `took ${took} ms`);
  t.deepEqual(await Promise.all(['openai-a', 'openai-b'].map((c) => upstreamCount(fast, c))), [1, 0]);
  const row = await usageRow(fast, r.trace);
  t.is(row.status, 'error');
  t.is(row.error_code, 'upstream_timeout');

  await addFault(fast, 'anthropic-a', { type: 'hang' }, 1);
  const m = await post(fast, '/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 5, messages: user('hi') }, { key: k });
  t.is(m.status, 504);
  t.is(m.json.error.type, 'api_error');
  await addFault(fast, 'gemini-a', { type: 'hang' }, 1);
  const g = await post(fast, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, { key: k });
  t.is(g.status, 504);
  t.is(g.json.error.status, 'DEADLINE_EXCEEDED');

  // The deadline covers streaming too: 40 tokens at 100 ms each outlive 1.5 s.
  await fast.control('POST', '/latency', { channel: 'openai-a', ttft_ms: 0, token_delay_ms: 100 });
  const s = await post(fast, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('hi'), max_tokens: 40, stream: true }, { key: k });
  t.is(s.status, 200);
  t.false(s.text.includes('[DONE]'));
  const events = sseEvents(s.text);
  t.true(events.length > 5 && events.length < 40, `${events.length} chunks`);
  const srow = await usageRow(fast, s.trace);
  t.is(srow.status, 'interrupted');
  t.is(srow.error_code, 'upstream_timeout');
  t.true(srow.cost_nano > 0, 'the text that went out is billed');
});
