// Money through the real endpoints: every pricing rule of spec 1 section 2.4
// with exact amounts (simulator usage overrides), the pre-charge gate,
// settlement below zero, interrupted streams.
import test, { type ExecutionContext } from 'ava';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startGateway, type TestGateway } from '../helpers/stack';
import { addFault, chargeEntry, freshKey, post, setUsage, sleep, sseEvents, upstreamCount, usageRow, user, type Reply } from './helpers';

let gw: TestGateway;
/** Simulator requests whose response was closed before it finished (the gateway aborted them). */
const abortedUpstream: string[] = [];
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  gw.sim!.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    res.once('close', () => {
      if (!res.writableFinished) abortedUpstream.push(req.url ?? '');
    });
  });
});
test.after.always(async () => gw?.close());
test.beforeEach(async () => {
  await gw.control('POST', '/reset');
});

const balance = (accountId: string) => gw.deps.wallet.balance(accountId);
const promptTokens = (messages: unknown) => Math.ceil(Buffer.byteLength(JSON.stringify(messages)) / 4);

/** The charge of one request, seen from every side: ledger entry, balance delta, usage row. */
async function assertCharged(t: ExecutionContext, r: Reply, acc: { accountId: string; keyId: string }, before: number, cost: number, row: Record<string, unknown> = {}) {
  t.is(r.status, 200, r.text);
  const usage = await usageRow(gw, r.trace);
  t.is(usage.cost_nano, cost, 'usage row cost_nano');
  for (const [k, v] of Object.entries(row)) t.is(usage[k], v, `usage row ${k}`);
  const entry = await chargeEntry(gw, r.trace);
  t.truthy(entry, 'ledger {requestId}:charge');
  t.is(entry.kind, 'charge');
  t.is(entry.amount_nano, -cost);
  t.is(entry.key_spend_nano, cost);
  t.is(entry.key_id, acc.keyId);
  t.is(entry.account_id, acc.accountId);
  t.is(before - (await balance(acc.accountId)), cost, 'balance delta');
}

async function usedUsd(key: string): Promise<string> {
  const r = await fetch(`${gw.url}/v1/key/balance`, { headers: { authorization: `Bearer ${key}` } });
  return ((await r.json()) as { used_usd: string }).used_usd;
}

// ---------------------------------------------------------------- pricing rules

test.serial('cached tokens are charged at the cached price (chat-completions and responses)', async (t) => {
  const acc = await freshKey(gw);
  // gpt-5.1: 1.25 / 0.125 / 10 per 1M -> 1250 / 125 / 10000 nano per token.
  // 6000 x 1250 + 4000 x 125 + 500 x 10000 = 7,500,000 + 500,000 + 5,000,000
  const cost = 13_000_000;
  await setUsage(gw, 'openai-a', { prompt_tokens: 10_000, cached_tokens: 4000, output_tokens: 500 });
  let before = await balance(acc.accountId);
  const r = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('cache me'), max_tokens: 5 }, { key: acc.key });
  t.is(r.json.usage.prompt_tokens_details.cached_tokens, 4000);
  await assertCharged(t, r, acc, before, cost, { input_tokens: 10_000, cached_tokens: 4000, output_tokens: 500, status: 'success' });

  await setUsage(gw, 'openai-resp-a', { prompt_tokens: 10_000, cached_tokens: 4000, output_tokens: 500 });
  before = await balance(acc.accountId);
  const s = await post(gw, '/v1/responses', { model: 'gpt-5.1', input: 'cache me', stream: true, max_output_tokens: 50 }, { key: acc.key });
  await assertCharged(t, s, acc, before, cost, { input_tokens: 10_000, cached_tokens: 4000, output_tokens: 500 });
  t.is(await usedUsd(acc.key), '0.026');
});

test.serial('claude: cache writes at input x 1.25, cache reads at the cached price (messages, its stream, and translated)', async (t) => {
  const acc = await freshKey(gw);
  // claude-sonnet-4-5: 3 / 0.3 / 15 per 1M -> 3000 / 300 / 15000 nano per token.
  // 1000 x 3000 + 3000 x 300 + 2000 x 3000 x 1.25 + 400 x 15000 = 3,000,000 + 900,000 + 7,500,000 + 6,000,000
  const cost = 17_400_000;
  await setUsage(gw, 'anthropic-a', { prompt_tokens: 1000, cache_creation_input_tokens: 2000, cache_read_input_tokens: 3000, output_tokens: 400 });
  const row = { input_tokens: 6000, cached_tokens: 3000, output_tokens: 400 };
  for (const [path, body] of [
    ['/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 5, messages: user('cache me') }],
    ['/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 5, messages: user('cache me'), stream: true }],
    ['/v1/chat/completions', { model: 'claude-sonnet-4-5', max_tokens: 5, messages: user('cache me'), stream: true }],
    ['/v1/chat/completions', { model: 'claude-sonnet-4-5', max_tokens: 5, messages: user('cache me') }],
  ] as const) {
    const before = await balance(acc.accountId);
    const r = await post(gw, path, body, { key: acc.key });
    await assertCharged(t, r, acc, before, cost, row);
  }
  t.is(await usedUsd(acc.key), '0.0696');

  // Another family gets no cache-write surcharge: gpt pays a plain input price for the same tokens.
  await setUsage(gw, 'openai-a', { prompt_tokens: 6000, cached_tokens: 3000, output_tokens: 400 });
  const before = await balance(acc.accountId);
  const g = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('x'), max_tokens: 5 }, { key: acc.key });
  // 3000 x 1250 + 3000 x 125 + 400 x 10000
  await assertCharged(t, g, acc, before, 3_750_000 + 375_000 + 4_000_000);
});

test.serial('promotions: deepseek x0.6 and qwen x0.3, cached price scaled too', async (t) => {
  const rules = gw.deps.catalogue().pricingRules;
  const promo = (family: string) => rules.promotions.find((p) => p.family === family)!;
  t.is(promo('deepseek').multiplier, '0.6');
  t.is(promo('qwen').multiplier, '0.3');
  const inForce = (family: string) => !promo(family).until || new Date() <= new Date(`${promo(family).until}T23:59:59Z`);
  const acc = await freshKey(gw);

  // deepseek-v3.2: 0.28 / 0.028 / 0.42 per 1M -> x0.6: 168 / 16.8 / 252 nano per token.
  // 5000 x 168 + 5000 x 16.8 + 1000 x 252 = 840,000 + 84,000 + 252,000 (list price: 1,400,000 + 140,000 + 420,000)
  await setUsage(gw, 'deepseek-a', { prompt_tokens: 10_000, cached_tokens: 5000, output_tokens: 1000 });
  let before = await balance(acc.accountId);
  const d = await post(gw, '/v1/chat/completions', { model: 'deepseek-v3.2', messages: user('promo'), max_tokens: 5, stream: true, stream_options: { include_usage: true } }, { key: acc.key });
  await assertCharged(t, d, acc, before, inForce('deepseek') ? 1_176_000 : 1_960_000, { cached_tokens: 5000 });

  // qwen3-max: 1.2 / 0.24 / 6 per 1M -> x0.3: 360 / 72 / 1800 nano per token.
  // 5000 x 360 + 5000 x 72 + 1000 x 1800 = 1,800,000 + 360,000 + 1,800,000 (list price: 6,000,000 + 1,200,000 + 6,000,000)
  await setUsage(gw, 'qwen-a', { prompt_tokens: 10_000, cached_tokens: 5000, output_tokens: 1000 });
  before = await balance(acc.accountId);
  const q = await post(gw, '/v1/chat/completions', { model: 'qwen3-max', messages: user('promo'), max_tokens: 5 }, { key: acc.key });
  await assertCharged(t, q, acc, before, inForce('qwen') ? 3_960_000 : 13_200_000, { cached_tokens: 5000 });

  // A line that does not divide evenly rounds half up: 3 cached deepseek tokens x 16.8 = 50.4 -> 50,
  // plus 5 output tokens x 252 (an output of 0 tokens for delivered text would be billed on the estimate).
  await setUsage(gw, 'deepseek-a', { prompt_tokens: 3, cached_tokens: 3, output_tokens: 5 });
  before = await balance(acc.accountId);
  const odd = await post(gw, '/v1/chat/completions', { model: 'deepseek-v3.2', messages: user('promo'), max_tokens: 5 }, { key: acc.key });
  t.is(odd.status, 200);
  if (inForce('deepseek')) {
    t.is((await usageRow(gw, odd.trace)).cost_nano, 50 + 1260);
    t.is(before - (await balance(acc.accountId)), 50 + 1260);
  }
});

test.serial('long context: 200K prompt tokens or more double input, cached and output on gemini-2.5-pro and gemini-3-pro-preview only', async (t) => {
  const acc = await freshKey(gw);
  const gen = (model: string) => post(gw, `/v1beta/models/${model}:generateContent`, { contents: [{ role: 'user', parts: [{ text: 'long' }] }] }, { key: acc.key });

  // gemini-2.5-pro: 1250 / 125 / 10000 nano per token, doubled at >= 200,000 prompt tokens.
  await setUsage(gw, 'gemini-a', { prompt_tokens: 200_000, output_tokens: 100 });
  let before = await balance(acc.accountId);
  // 200,000 x 2500 + 100 x 20000
  await assertCharged(t, await gen('gemini-2.5-pro'), acc, before, 502_000_000, { input_tokens: 200_000, output_tokens: 100 });

  await setUsage(gw, 'gemini-a', { prompt_tokens: 199_999, output_tokens: 100 });
  before = await balance(acc.accountId);
  // 199,999 x 1250 + 100 x 10000: one token under the threshold, list price
  await assertCharged(t, await gen('gemini-2.5-pro'), acc, before, 250_998_750);

  await setUsage(gw, 'gemini-a', { prompt_tokens: 200_000, cached_tokens: 50_000, output_tokens: 100 });
  before = await balance(acc.accountId);
  // 150,000 x 2500 + 50,000 x 250 + 100 x 20000: the criterion is the whole prompt, cached included
  await assertCharged(t, await gen('gemini-2.5-pro'), acc, before, 389_500_000, { cached_tokens: 50_000 });

  // gemini-2.5-flash is not one of the two: 200,000 x 300 + 100 x 2500
  await setUsage(gw, 'gemini-a', { prompt_tokens: 200_000, output_tokens: 100 });
  before = await balance(acc.accountId);
  await assertCharged(t, await gen('gemini-2.5-flash'), acc, before, 60_250_000);

  // gemini-3-pro-preview through chat-completions translation: 2000 / 12000 per token, doubled.
  await setUsage(gw, 'gemini-a', { prompt_tokens: 250_000, output_tokens: 10 });
  before = await balance(acc.accountId);
  const c = await post(gw, '/v1/chat/completions', { model: 'gemini-3-pro-preview', messages: user('long'), max_tokens: 10, stream: true }, { key: acc.key });
  // 250,000 x 4000 + 10 x 24000
  await assertCharged(t, c, acc, before, 1_000_240_000);
});

test.serial('grok server-side tool calls: 0.674 each, recorded in server_tool_calls; other families pay no fee', async (t) => {
  const acc = await freshKey(gw);
  await setUsage(gw, 'xai-a', { prompt_tokens: 1000, output_tokens: 200, server_tool_calls: 3 });
  let before = await balance(acc.accountId);
  const r = await post(gw, '/v1/chat/completions', { model: 'grok-4', messages: user('search the web'), max_tokens: 5, stream: true, tools: [{ type: 'web_search' }] }, { key: acc.key });
  t.is(sseEvents(r.text).at(-1)?.data, '[DONE]');
  // grok-4: 1000 x 3000 + 200 x 15000 + 3 x 674,000,000
  await assertCharged(t, r, acc, before, 2_028_000_000, { server_tool_calls: 3 });
  // The usage API shows the column; the CSV export keeps spec 2's columns.
  const listed = (await (await fetch(`${gw.url}/api/v1/usage`, { headers: { authorization: `Bearer ${acc.key}` } })).json()) as { data: Array<Record<string, unknown>> };
  t.is(listed.data.find((row) => row.request_id === r.trace)?.server_tool_calls, 3);
  const csvHeader = (await (await fetch(`${gw.url}/api/v1/usage/export`, { headers: { authorization: `Bearer ${acc.key}` } })).text()).split('\n')[0];
  t.false(csvHeader.includes('server_tool_calls'));

  await setUsage(gw, 'xai-a', { prompt_tokens: 1000, output_tokens: 200, server_tool_calls: 1 });
  before = await balance(acc.accountId);
  const plain = await post(gw, '/v1/chat/completions', { model: 'grok-4-fast', messages: user('x'), max_tokens: 5 }, { key: acc.key });
  // grok-4-fast: 1000 x 200 + 200 x 500 + 674,000,000
  await assertCharged(t, plain, acc, before, 674_300_000, { server_tool_calls: 1 });

  await setUsage(gw, 'openai-a', { prompt_tokens: 1000, output_tokens: 200, server_tool_calls: 2 });
  before = await balance(acc.accountId);
  const gpt = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('search'), max_tokens: 5, stream: true, tools: [{ type: 'web_search' }] }, { key: acc.key });
  // 1000 x 1250 + 200 x 10000, no fee
  await assertCharged(t, gpt, acc, before, 3_250_000, { server_tool_calls: 2 });
  t.is(await usedUsd(acc.key), '2.70555');
});

// ---------------------------------------------------------------- pre-charge gate and settlement

test.serial('pre-charge gate: estimate above the balance is 402 with no upstream call; a small max_tokens passes; settlement may go below 0 and the next request is refused', async (t) => {
  const acc = await freshKey(gw);
  // Drain to exactly 1.44: claude-opus-4-1 input 5 x 15,000 + output 519,999 x 75,000 nano = 39 credits
  // (an upstream reporting 0 input tokens for a real prompt is billed on the estimate instead).
  await setUsage(gw, 'anthropic-a', { prompt_tokens: 5, output_tokens: 519_999 });
  const drain = await post(gw, '/v1/messages', { model: 'claude-opus-4-1', max_tokens: 10, messages: user('drain') }, { key: acc.key });
  t.is(drain.status, 200, drain.text);
  await usageRow(gw, drain.trace); // settled just after the answer went out
  t.is(await balance(acc.accountId), 1_440_000_000);
  await gw.control('POST', '/reset');

  // claude-opus-4-1 without max_tokens: 32,000 x 75,000 = 2.4 credits of output alone > 1.44.
  const big = await post(gw, '/v1/chat/completions', { model: 'claude-opus-4-1', messages: user('x') }, { key: acc.key });
  t.is(big.status, 402, big.text);
  t.is(big.json.error.code, 'quota_exceeded');
  t.is(big.json.error.type, 'insufficient_quota');
  const bigMessages = await post(gw, '/v1/messages', { model: 'claude-opus-4-1', max_tokens: 20_000, messages: user('x') }, { key: acc.key });
  t.is(bigMessages.status, 402);
  t.is(bigMessages.json.error.type, 'billing_error');
  const bigGemini = await post(gw, '/v1beta/models/gemini-2.5-pro:generateContent', { contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { maxOutputTokens: 200_000 } }, { key: acc.key });
  t.is(bigGemini.status, 402);
  t.deepEqual([bigGemini.json.error.code, bigGemini.json.error.status], [402, 'RESOURCE_EXHAUSTED']);
  t.is((await gw.control('GET', '/requests')).count, 0, 'no upstream call');
  t.is((await usageRow(gw, big.trace)).status, 'rejected');

  // The boundary on gpt-5.1 (1250 in, 10000 out per token): an estimate equal to the balance passes.
  const messages = user('x');
  const input = promptTokens(messages) * 1250;
  const maxTokens = Math.floor((1_440_000_000 - input) / 10_000);
  t.is(input + maxTokens * 10_000, 1_440_000_000, 'the test picked an exact boundary');
  // 24 output tokens: the 24 words the simulator sends (a count far below the text is billed on the estimate).
  await setUsage(gw, 'openai-a', { prompt_tokens: 8, output_tokens: 24 });
  const over = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages, max_tokens: maxTokens + 1 }, { key: acc.key });
  t.is(over.status, 402);
  t.is(await upstreamCount(gw, 'openai-a'), 0);
  const exact = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages, max_tokens: maxTokens }, { key: acc.key });
  t.is(exact.status, 200, exact.text);
  await usageRow(gw, exact.trace);
  t.is(await upstreamCount(gw, 'openai-a'), 1);
  // 8 x 1250 + 24 x 10000
  t.is(await balance(acc.accountId), 1_440_000_000 - 250_000);

  // A small max_tokens passes the gate; the actual usage is settled without a gate and goes below 0.
  await setUsage(gw, 'openai-a', { prompt_tokens: 8, output_tokens: 200_000 });
  const small = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages, max_tokens: 10, stream: true }, { key: acc.key });
  t.is(small.status, 200);
  t.is(sseEvents(small.text).at(-1)?.data, '[DONE]');
  await usageRow(gw, small.trace);
  // 1,439,750,000 - (8 x 1250 + 200,000 x 10000)
  t.is(await balance(acc.accountId), -560_260_000);
  t.is((await chargeEntry(gw, small.trace)).amount_nano, -2_000_010_000);

  // The next request (after the settlement) is refused at authentication, whatever its size and endpoint.
  const next = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages, max_tokens: 1 }, { key: acc.key });
  t.is(next.status, 402);
  t.is(next.json.error.code, 'quota_exceeded');
  const nextMessages = await post(gw, '/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 1, messages }, { key: acc.key });
  t.is(nextMessages.status, 402);
  t.is(await upstreamCount(gw, 'openai-a'), 2);
  const view = (await (await fetch(`${gw.url}/v1/key/balance`, { headers: { authorization: `Bearer ${acc.key}` } })).json()) as { remaining_usd: string };
  t.is(view.remaining_usd, '0.00');
});

// ---------------------------------------------------------------- interrupted streams

/** Read a streaming response until `enough(text)`, then abort it. */
async function readThenAbort(path: string, body: unknown, key: string, enough: (text: string) => boolean): Promise<{ trace: string; text: string }> {
  const ac = new AbortController();
  const res = await fetch(gw.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: ac.signal });
  const trace = res.headers.get('x-gateway-trace')!;
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  while (!enough(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before the abort point: ${text}`);
    text += dec.decode(value, { stream: true });
  }
  ac.abort();
  await reader.cancel().catch(() => undefined);
  return { trace, text };
}

async function waitFor(cond: () => boolean, ms = 3000): Promise<boolean> {
  const until = Date.now() + ms;
  while (!cond() && Date.now() < until) await sleep(10);
  return cond();
}

const contentOf = (text: string) =>
  sseEvents(text.slice(0, text.lastIndexOf('\n\n') + 2))
    .filter((e) => e.data !== '[DONE]')
    .map((e) => JSON.parse(e.data).choices?.[0]?.delta?.content ?? '')
    .join('');

test.serial('client abort mid-stream: row interrupted, billed on the output characters, upstream request aborted', async (t) => {
  const acc = await freshKey(gw);
  await gw.control('POST', '/latency', { channel: 'openai-a', ttft_ms: 0, token_delay_ms: 40 });
  const messages = user('Tell me a long story');
  const before = await balance(acc.accountId);
  abortedUpstream.length = 0;
  const { trace, text } = await readThenAbort('/v1/chat/completions', { model: 'gpt-5.1', messages, max_tokens: 60, stream: true }, acc.key, (s) => (s.match(/"content":"[^"]+"/g) ?? []).length >= 4);
  const row = await usageRow(gw, trace);
  t.is(row.status, 'interrupted');
  t.is(row.error_code, 'client_closed');
  // No usage arrived: input estimated from the prompt bytes, output from the characters relayed.
  t.is(row.input_tokens, promptTokens(messages));
  t.true(row.output_tokens >= Math.ceil(contentOf(text).length / 4), `${row.output_tokens} tokens for ${contentOf(text).length} chars`);
  t.true(row.output_tokens < 60 * 3);
  const cost = row.input_tokens * 1250 + row.output_tokens * 10_000;
  t.is(row.cost_nano, cost);
  t.is((await chargeEntry(gw, trace)).amount_nano, -cost);
  t.is(before - (await balance(acc.accountId)), cost);
  t.true(await waitFor(() => abortedUpstream.some((u) => u.startsWith('/ch/openai-a/'))), 'the simulator saw its request aborted');
});

test.serial('client abort mid-stream on messages: billed on the usage that arrived plus the output characters', async (t) => {
  const acc = await freshKey(gw);
  await setUsage(gw, 'anthropic-a', { prompt_tokens: 1000 });
  await gw.control('POST', '/latency', { channel: 'anthropic-a', ttft_ms: 0, token_delay_ms: 40 });
  const before = await balance(acc.accountId);
  abortedUpstream.length = 0;
  const { trace } = await readThenAbort('/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 60, stream: true, messages: user('Tell me a story') }, acc.key, (s) => (s.match(/text_delta/g) ?? []).length >= 3);
  const row = await usageRow(gw, trace);
  t.is(row.status, 'interrupted');
  t.is(row.input_tokens, 1000, 'input from message_start');
  t.true(row.output_tokens >= 1 && row.output_tokens < 60);
  const cost = 1000 * 3000 + row.output_tokens * 15_000;
  t.is(row.cost_nano, cost);
  t.is(before - (await balance(acc.accountId)), cost);
  t.true(await waitFor(() => abortedUpstream.some((u) => u.startsWith('/ch/anthropic-a/'))));
});

test.serial('upstream cut before any content: interrupted, cost 0, no ledger entry (every protocol)', async (t) => {
  const acc = await freshKey(gw);
  const before = await balance(acc.accountId);
  await setUsage(gw, 'anthropic-a', { prompt_tokens: 5000 });
  const cases: [string, string, Record<string, unknown>, number][] = [
    ['openai-a', '/v1/chat/completions', { model: 'gpt-5.1', messages: user('x'), stream: true, max_tokens: 20 }, 1],
    // message_start (with 5000 input tokens), content_block_start, ping: no text yet.
    ['anthropic-a', '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 20, messages: user('x'), stream: true }, 3],
    ['anthropic-a', '/v1/chat/completions', { model: 'claude-sonnet-4-5', messages: user('x'), stream: true, max_tokens: 20 }, 3],
    ['openai-resp-a', '/v1/responses', { model: 'gpt-5.1', input: 'x', stream: true, max_output_tokens: 50 }, 2],
    // (generate-content has no chunk without content: cut before its first one, a stream fails over instead,
    // test/chat/failover.test.ts.)
  ];
  for (const [channel, path, body, after] of cases) {
    await addFault(gw, channel, { type: 'cut', after_chunks: after }, 1);
    const r = await post(gw, path, body, { key: acc.key });
    t.is(r.status, 200, `${path}: ${r.text}`);
    const row = await usageRow(gw, r.trace);
    t.is(row.status, 'interrupted', path);
    t.is(row.cost_nano, 0, path);
    t.is(await chargeEntry(gw, r.trace), null, path);
  }
  t.is(await balance(acc.accountId), before);
});

test.serial('upstream cut after some content: billed on the characters received, status interrupted', async (t) => {
  const acc = await freshKey(gw);
  const messages = user('Five words please now');
  await addFault(gw, 'openai-a', { type: 'cut', after_chunks: 5 }, 1);
  const before = await balance(acc.accountId);
  const r = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages, stream: true, max_tokens: 20 }, { key: acc.key });
  const chars = contentOf(r.text).length;
  t.true(chars > 0);
  const row = await usageRow(gw, r.trace);
  t.is(row.status, 'interrupted');
  t.is(row.error_code, 'upstream_cut');
  t.is(row.input_tokens, promptTokens(messages));
  t.is(row.output_tokens, Math.ceil(chars / 4));
  const cost = promptTokens(messages) * 1250 + Math.ceil(chars / 4) * 10_000;
  t.is(row.cost_nano, cost);
  t.is(before - (await balance(acc.accountId)), cost);

  // generate-content reports usage only in its last chunk: a cut stream is estimated too, never free.
  await addFault(gw, 'gemini-a', { type: 'cut', after_chunks: 2 }, 1);
  const g = await post(gw, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'Five words please now' }] }], generationConfig: { maxOutputTokens: 10 } }, { key: acc.key });
  const grow = await usageRow(gw, g.trace);
  t.is(grow.status, 'interrupted');
  t.true(grow.cost_nano > 0);
});
