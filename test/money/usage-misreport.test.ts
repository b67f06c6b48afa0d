import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { post, sseEvents, setUsage, usageRow } from '../chat/helpers';
import { chatCharge } from '../../domain/pricing';
import { counters } from '../../platform/metrics/counters';
import { estimateTokens } from '../../domain/usage-estimate';
import { formatCredits } from '../../domain/money';

/**
 * Usage the upstream gets wrong (issue 14 section 2): a turn that delivered
 * output is never billed at 0. Missing, zero or implausibly low usage is
 * replaced by the character estimate (prompt JSON bytes / 4, output
 * characters / 4), the row says so, and a counter per channel counts it.
 */

let gw: TestGateway;
let key: string;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  const a = await gw.newAccount();
  await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '1000' });
  key = (await gw.newKey(a.id)).key;
});
test.after.always(async () => {
  await gw?.close();
});
test.afterEach.always(async () => {
  await gw.control('POST', '/reset');
});

interface Case {
  protocol: string;
  model: string;
  channel: string;
  path: (stream: boolean) => string;
  body: (stream: boolean, text: string) => Record<string, unknown>;
  headers?: Record<string, string>;
  /** Characters of generated text in the answer the client got. */
  outputChars: (text: string, stream: boolean) => number;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const cases: Case[] = [
  {
    protocol: 'chat-completions', model: 'gpt-5.1', channel: 'openai-a',
    path: () => '/v1/chat/completions',
    body: (stream, text) => ({ model: 'gpt-5.1', max_tokens: 20, stream, messages: [{ role: 'user', content: text }] }),
    outputChars: (t, stream) => stream
      ? sum(sseEvents(t).filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data)).flatMap((c) => c.choices ?? []).map((c: any) => (c.delta?.content ?? '').length))
      : JSON.parse(t).choices[0].message.content.length,
  },
  {
    protocol: 'messages', model: 'claude-sonnet-4-5', channel: 'anthropic-a',
    path: () => '/v1/messages', headers: { 'anthropic-version': '2023-06-01' },
    body: (stream, text) => ({ model: 'claude-sonnet-4-5', max_tokens: 20, stream, messages: [{ role: 'user', content: text }] }),
    outputChars: (t, stream) => stream
      ? sum(sseEvents(t).filter((e) => e.event === 'content_block_delta').map((e) => JSON.parse(e.data).delta.text.length))
      : JSON.parse(t).content[0].text.length,
  },
  {
    protocol: 'responses', model: 'gpt-5.1', channel: 'openai-resp-a',
    path: () => '/v1/responses',
    body: (stream, text) => ({ model: 'gpt-5.1', max_output_tokens: 20, stream, input: text }),
    outputChars: (t, stream) => stream
      ? sum(sseEvents(t).filter((e) => e.event === 'response.output_text.delta').map((e) => JSON.parse(e.data).delta.length))
      : sum(JSON.parse(t).output.flatMap((o: any) => o.content ?? []).map((c: any) => (c.text ?? '').length)),
  },
  {
    protocol: 'generate-content', model: 'gemini-2.5-flash', channel: 'gemini-a',
    path: (stream) => (stream ? '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse' : '/v1beta/models/gemini-2.5-flash:generateContent'),
    body: (_stream, text) => ({ contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: 20 } }),
    outputChars: (t, stream) => sum(
      (stream ? sseEvents(t).map((e) => JSON.parse(e.data)) : [JSON.parse(t)]).flatMap((c) => c.candidates ?? []).flatMap((c: any) => c.content?.parts ?? []).map((p: any) => (p.text ?? '').length),
    ),
  },
];

function promptBytes(c: Case, stream: boolean, text: string): number {
  const b = c.body(stream, text);
  const prompt = c.protocol === 'generate-content' ? b.contents : c.protocol === 'responses' ? b.input : b.messages;
  return Buffer.byteLength(JSON.stringify(prompt));
}

function cost(modelId: string, inputTokens: number, outputTokens: number): number {
  const model = gw.deps.catalogue().resolve(modelId)!;
  return chatCharge(model, gw.deps.catalogue().pricingRules, { inputTokens, outputTokens, cachedTokens: 0, cacheWriteTokens: 0, serverToolCalls: 0 }).costNano;
}

for (const c of cases) {
  for (const stream of [false, true]) {
    const kind = `${c.protocol} ${stream ? 'stream' : 'json'}`;

    test.serial(`${kind}: zero usage for a delivered answer is billed on the estimate and marked`, async (t) => {
      await setUsage(gw, c.channel, { prompt_tokens: 0, output_tokens: 0 });
      const text = `zero usage ${kind}`;
      const counted = counters.chatUsageEstimated.get({ channel: c.channel, model: c.model, reason: 'zero' });
      const r = await post(gw, c.path(stream), c.body(stream, text), { key, headers: c.headers });
      t.is(r.status, 200, r.text);
      const chars = c.outputChars(r.text, stream);
      t.true(chars > 0);
      const row = await usageRow(gw, r.trace);
      t.is(row.status, 'success');
      t.true(row.usage_estimated);
      t.regex(row.error_message, /usage estimated from \d+ output characters: the upstream reported zero usage/);
      t.is(row.input_tokens, estimateTokens(promptBytes(c, stream, text)));
      t.is(row.output_tokens, estimateTokens(chars));
      t.is(row.cost_nano, cost(c.model, row.input_tokens, row.output_tokens));
      t.true(row.cost_nano > 0, 'never 0 for delivered output');
      t.is(counters.chatUsageEstimated.get({ channel: c.channel, model: c.model, reason: 'zero' }), counted + 1);
    });

    test.serial(`${kind}: implausibly low output usage is billed on the estimate; plausible usage is billed as reported`, async (t) => {
      await setUsage(gw, c.channel, { prompt_tokens: 7, output_tokens: 1 });
      const text = `low usage ${kind}`;
      const low = await post(gw, c.path(stream), c.body(stream, text), { key, headers: c.headers });
      t.is(low.status, 200, low.text);
      const chars = c.outputChars(low.text, stream);
      t.true(chars > 16, 'more text than one token can hold');
      const row = await usageRow(gw, low.trace);
      t.true(row.usage_estimated);
      t.regex(row.error_message, /implausibly low usage/);
      t.is(row.input_tokens, 7, 'a reported input count stays');
      t.is(row.output_tokens, estimateTokens(chars));
      t.is(row.cost_nano, cost(c.model, 7, estimateTokens(chars)));

      await setUsage(gw, c.channel, { prompt_tokens: 7, output_tokens: 20 });
      const fine = await post(gw, c.path(stream), c.body(stream, `fine usage ${kind}`), { key, headers: c.headers });
      t.is(fine.status, 200);
      const ok = await usageRow(gw, fine.trace);
      t.false(ok.usage_estimated);
      t.is(ok.error_message, null);
      t.is(ok.output_tokens, 20);
      t.is(ok.cost_nano, cost(c.model, 7, 20));
    });
  }
}

/** The case's body with room for a long answer (every protocol's output cap at 1,000). */
function longBody(c: Case, stream: boolean, text: string): Record<string, unknown> {
  const b = c.body(stream, text) as Record<string, any>;
  if (c.protocol === 'responses') b.max_output_tokens = 1000;
  else if (c.protocol === 'generate-content') b.generationConfig = { maxOutputTokens: 1000 };
  else b.max_tokens = 1000;
  return b;
}

for (const c of cases) {
  // A long answer's deltas are counted as they arrive once it has held 8 KB of them (protocols/usage/accumulator.ts).
  test.serial(`${c.protocol} stream: a 600-token answer with zero usage is billed on every character it delivered`, async (t) => {
    await gw.control('POST', '/output', { tokens: 600 });
    await setUsage(gw, c.channel, { prompt_tokens: 0, output_tokens: 0 });
    const text = `long zero usage ${c.protocol}`;
    const r = await post(gw, c.path(true), longBody(c, true, text), { key, headers: c.headers });
    t.is(r.status, 200, r.text);
    t.true(r.text.length > 64 * 1024, `a long answer (${r.text.length} bytes)`);
    const chars = c.outputChars(r.text, true);
    const row = await usageRow(gw, r.trace);
    t.true(row.usage_estimated);
    t.is(row.output_tokens, estimateTokens(chars));
    t.is(row.cost_nano, cost(c.model, row.input_tokens, row.output_tokens));
  });
}

test.serial('chat-completions json: an answer without any usage object is billed on the estimate', async (t) => {
  const content = 'An answer from an upstream that never reports usage at all.';
  await gw.control('POST', '/faults', {
    channel: 'openai-a', times: 1,
    fault: { type: 'status', status: 200, body: { id: 'chatcmpl-x', object: 'chat.completion', created: 1, model: 'gpt-5.1', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] } },
  });
  const messages = [{ role: 'user', content: 'no usage at all' }];
  const r = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', max_tokens: 20, messages }, { key });
  t.is(r.status, 200, r.text);
  const row = await usageRow(gw, r.trace);
  t.true(row.usage_estimated);
  t.regex(row.error_message, /the upstream reported no usage/);
  t.is(row.input_tokens, estimateTokens(Buffer.byteLength(JSON.stringify(messages))));
  t.is(row.output_tokens, estimateTokens(content.length));
  t.is(row.cost_nano, cost('gpt-5.1', row.input_tokens, row.output_tokens));
  t.is((await gw.deps.wallet.journal.flush(), await gw.deps.db.Ledger.findById(`${r.trace}:charge`).lean())?.amount_nano, -row.cost_nano);
});

test.serial('an interrupted stream: its call log and usage API rows say it was billed on the estimate (usage_estimated), at the ledger charge', async (t) => {
  for (const channel of ['openai-a', 'openai-b', 'openai-c']) await gw.control('POST', '/faults', { channel, times: 1, fault: { type: 'cut', after_chunks: 4 } });
  const r = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', max_tokens: 50, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'cut short' }] }, { key });
  t.truthy(r.trace);
  const row = await usageRow(gw, r.trace);
  t.true(row.usage_estimated);
  const log = await fetch(`${gw.url}/api/v1/logs/${r.trace}`, { headers: { authorization: `Bearer ${key}` } });
  t.is(log.status, 200);
  const body = (await log.json()) as { usage: Record<string, unknown> };
  t.like(body.usage, { status: 'interrupted', usage_estimated: true });
  await gw.deps.wallet.journal.flush();
  const charge = await gw.deps.db.Ledger.findById(`${r.trace}:charge`).lean();
  t.is(body.usage.cost_usd, formatCredits(-charge!.amount_nano));
  const usage = await fetch(`${gw.url}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
  const listed = (await usage.json()) as { data: Array<Record<string, unknown>> };
  t.true(listed.data.find((x) => x.request_id === r.trace)?.usage_estimated as boolean);
});
