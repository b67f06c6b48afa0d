import test from 'ava';
import fc from 'fast-check';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { startGateway, type TestGateway } from '../helpers/stack';
import { chargeEntry, post, setUsage, sseEvents, usageRow } from './helpers';
import { parseCredits } from '../../domain/money';
import { chatCharge } from '../../domain/pricing';
import { costReport } from '../../domain/cost-report';
import type { PricingRules } from '../../domain/catalogue';

/**
 * Issue 26 step 1: every chat answer says what it cost. `x-gateway-cost` and usage.cost /
 * usageMetadata.cost are exactly the ledger entry and the usage row's cost, on every protocol,
 * streaming or not, for every pricing rule (cache reads and writes, promotions, long context,
 * server-side tool fees).
 */

let gw: TestGateway;
let key: string;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  const a = await gw.newAccount();
  await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '100000' });
  key = (await gw.newKey(a.id)).key;
});
test.after.always(async () => gw?.close());

type Protocol = 'chat-completions' | 'responses' | 'messages' | 'generate-content';

interface Call {
  protocol: Protocol;
  model: string;
  /** The simulator channel that answers first (its usage is overridden). */
  channel: string;
}

/** Models that exercise each rule of spec 1 section 2.4, on each protocol. */
const CALLS: Call[] = [
  { protocol: 'chat-completions', model: 'gpt-5.1', channel: 'openai-a' },
  { protocol: 'chat-completions', model: 'grok-4', channel: 'xai-a' },
  { protocol: 'chat-completions', model: 'deepseek-v3.2', channel: 'deepseek-a' },
  { protocol: 'chat-completions', model: 'qwen3-max', channel: 'qwen-a' },
  { protocol: 'chat-completions', model: 'claude-sonnet-4-5', channel: 'anthropic-a' },
  { protocol: 'chat-completions', model: 'gemini-2.5-pro', channel: 'gemini-a' },
  { protocol: 'responses', model: 'gpt-5.1', channel: 'openai-resp-a' },
  { protocol: 'messages', model: 'claude-sonnet-4-5', channel: 'anthropic-a' },
  { protocol: 'messages', model: 'deepseek-v3.2', channel: 'deepseek-msg-a' },
  { protocol: 'generate-content', model: 'gemini-2.5-pro', channel: 'gemini-a' },
  { protocol: 'generate-content', model: 'gemini-2.5-flash', channel: 'gemini-a' },
];

function request(c: Call, stream: boolean, text: string): { path: string; body: Record<string, unknown>; headers?: Record<string, string> } {
  switch (c.protocol) {
    case 'chat-completions':
      return { path: '/v1/chat/completions', body: { model: c.model, max_tokens: 16, stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages: [{ role: 'user', content: text }] } };
    case 'responses':
      return { path: '/v1/responses', body: { model: c.model, max_output_tokens: 16, stream, input: text } };
    case 'messages':
      return { path: '/v1/messages', body: { model: c.model, max_tokens: 16, stream, messages: [{ role: 'user', content: text }] }, headers: { 'anthropic-version': '2023-06-01' } };
    case 'generate-content':
      return { path: `/v1beta/models/${c.model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body: { contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: 16 } } };
  }
}

/** The usage object that carries the cost in an answer or in the stream's usage-bearing event. */
function reportedUsage(c: Call, stream: boolean, text: string, json: any): any {
  if (!stream) return c.protocol === 'generate-content' ? json.usageMetadata : json.usage;
  const events = sseEvents(text).filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
  const withCost = events.filter((e) => (e.usage ?? e.usageMetadata ?? e.response?.usage)?.cost !== undefined);
  if (withCost.length !== 1) throw new Error(`expected one event with the cost, got ${withCost.length}: ${text.slice(-800)}`);
  const e = withCost[0];
  return e.usage ?? e.usageMetadata ?? e.response.usage;
}

async function callAndCheck(t: any, c: Call, stream: boolean, override?: Record<string, number>) {
  await gw.control('POST', '/reset');
  if (override) await setUsage(gw, c.channel, override);
  const r = request(c, stream, `cost check ${c.model} ${Math.random()}`);
  const res = await post(gw, r.path, r.body, { key, headers: r.headers });
  t.is(res.status, 200, res.text.slice(0, 300));
  const usage = reportedUsage(c, stream, res.text, res.json);
  const row = await usageRow(gw, res.trace);
  const entry = await chargeEntry(gw, res.trace);
  const reported = parseCredits(usage.cost);
  t.is(row.cost_nano, reported, `${c.protocol} ${c.model} stream=${stream}: usage row`);
  t.is(entry ? -entry.amount_nano : 0, reported, `${c.protocol} ${c.model} stream=${stream}: ledger`);
  if (!stream) t.is(res.headers.get('x-gateway-cost'), usage.cost, 'the header says the same');
  const d = usage.cost_details;
  const sum = ['uncached_input', 'cached_input', 'cache_write', 'output', 'server_tool_calls'].reduce((s, k) => s + parseCredits(d[k]), 0);
  t.is(sum, reported, 'the breakdown adds up to the cost');
  return { usage, row };
}

for (const c of CALLS) {
  for (const stream of [false, true]) {
    test.serial(`${c.protocol} ${c.model} ${stream ? 'stream' : 'json'}: reported cost = ledger = usage row`, async (t) => {
      await callAndCheck(t, c, stream);
    });
  }
}

test.serial('every pricing rule shows in cost_details: cache write, cached input, promotion, long context, tool fee', async (t) => {
  const claude = await callAndCheck(t, CALLS[7], false, { prompt_tokens: 5000, cache_read_input_tokens: 1000, cache_creation_input_tokens: 2000, output_tokens: 16 });
  t.is(claude.usage.cost_details.multipliers.cache_write, '1.25');
  t.true(parseCredits(claude.usage.cost_details.cache_write) > 0);
  t.true(parseCredits(claude.usage.cost_details.cached_input) > 0);
  const deepseek = await callAndCheck(t, CALLS[2], false);
  t.is(deepseek.usage.cost_details.multipliers.promotion, '0.6');
  const gemini = await callAndCheck(t, CALLS[9], false, { prompt_tokens: 250_000, output_tokens: 16 });
  t.is(gemini.usage.cost_details.multipliers.long_context, '2');
  const grok = await callAndCheck(t, CALLS[1], false, { prompt_tokens: 100, output_tokens: 16, server_tool_calls: 3 });
  t.is(grok.usage.cost_details.server_tool_calls, '2.022');
  t.is(grok.usage.cost_details.multipliers.batch, '1');
});

test.serial('property: over random usages, models, protocols and streaming, reported cost = ledger entry = usage row, to the nano', async (t) => {
  t.timeout(300_000);
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...CALLS),
      fc.boolean(),
      fc.record({
        prompt_tokens: fc.integer({ min: 1, max: 400_000 }),
        cached_tokens: fc.integer({ min: 0, max: 5_000 }),
        cache_read_input_tokens: fc.integer({ min: 0, max: 5_000 }),
        cache_creation_input_tokens: fc.integer({ min: 0, max: 5_000 }),
        server_tool_calls: fc.integer({ min: 0, max: 5 }),
        output_tokens: fc.integer({ min: 1, max: 16 }),
      }),
      async (c, stream, usage) => {
        // Inside the property a failed check throws, so fast-check shrinks it to the smallest case.
        const strict = { is: (a: unknown, b: unknown, m?: string) => { if (a !== b) throw new Error(`${m}: ${String(a)} !== ${String(b)}`); } };
        await callAndCheck(strict, c, stream, usage);
      },
    ),
    { numRuns: 40 },
  );
  t.pass();
});

test('property (pure): over random pricing rules and usages, the report is the charge and its lines add up', (t) => {
  const decimal = fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 999 })).map(([w, f]) => `${w}.${String(f).padStart(3, '0')}`);
  fc.assert(
    fc.property(
      fc.record({ cw: decimal, promo: decimal, lc: decimal, fee: decimal, batch: fc.option(decimal, { nil: undefined }), threshold: fc.integer({ min: 1, max: 300_000 }) }),
      fc.record({ inputTokens: fc.integer({ min: 0, max: 1_000_000 }), outputTokens: fc.integer({ min: 0, max: 100_000 }), cachedTokens: fc.integer({ min: 0, max: 500_000 }), cacheWriteTokens: fc.integer({ min: 0, max: 500_000 }), serverToolCalls: fc.integer({ min: 0, max: 20 }) }),
      fc.boolean(),
      (r, usage, batch) => {
        const rules: PricingRules = {
          cache_write: { families: ['claude'], multiplier: r.cw },
          promotions: [{ family: 'claude', multiplier: r.promo }],
          long_context: { models: ['claude-x'], threshold_tokens: r.threshold, multiplier: r.lc },
          server_tool_fee: { families: ['claude'], credits_per_call: r.fee },
          ...(r.batch ? { batch_multiplier: r.batch } : {}),
        };
        const model = { id: 'claude-x', family: 'claude', pricing: { input_per_1m: 3, output_per_1m: 15, cached_per_1m: 0.3 } } as any;
        const charge = chatCharge(model, rules, usage, new Date(), { batch });
        const rep = costReport(charge);
        const d = rep.cost_details;
        const sum = parseCredits(d.uncached_input) + parseCredits(d.cached_input) + parseCredits(d.cache_write) + parseCredits(d.output) + parseCredits(d.server_tool_calls);
        return parseCredits(rep.cost) === charge.costNano && sum === charge.costNano && d.multipliers.batch === (batch && r.batch ? String(Number(r.batch)) : '1');
      },
    ),
    { numRuns: 2000 },
  );
  t.pass();
});

test.serial('official SDKs read the cost fields: openai (chat, responses), anthropic, google genai', async (t) => {
  const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const { data: chat, response } = await openai.chat.completions.create({ model: 'gpt-5.1', max_tokens: 8, messages: [{ role: 'user', content: 'sdk cost' }] }).withResponse();
  const chatCost = (chat.usage as any).cost as string;
  t.is(response.headers.get('x-gateway-cost'), chatCost);
  t.is(-(await chargeEntry(gw, response.headers.get('x-gateway-trace')!)).amount_nano, parseCredits(chatCost));

  const stream = await openai.chat.completions.create({ model: 'gpt-5.1', max_tokens: 8, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'sdk stream cost' }] });
  let streamed: any;
  for await (const chunk of stream) if (chunk.usage) streamed = chunk.usage;
  t.regex(streamed.cost, /^\d+\.\d+$/);
  t.truthy(streamed.cost_details);

  const resp = await openai.responses.create({ model: 'gpt-5.1', max_output_tokens: 8, input: 'sdk responses cost' });
  t.regex((resp.usage as any).cost, /^\d+\.\d+$/);

  const anthropic = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  const { data: msg, response: mres } = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'sdk cost' }] }).withResponse();
  t.is(mres.headers.get('x-gateway-cost'), (msg.usage as any).cost);
  const ms = anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'sdk stream cost' }] });
  let deltaCost: string | undefined;
  ms.on('streamEvent', (e: any) => {
    if (e.type === 'message_delta') deltaCost = e.usage.cost;
  });
  await ms.finalMessage();
  t.regex(deltaCost ?? '', /^\d+\.\d+$/);

  const google = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
  const g = await google.models.generateContent({ model: 'gemini-2.5-flash', contents: 'sdk cost', config: { maxOutputTokens: 8 } });
  t.regex((g.usageMetadata as any).cost, /^\d+\.\d+$/);
  let gLast: any;
  for await (const chunk of await google.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'sdk stream cost', config: { maxOutputTokens: 8 } })) {
    if ((chunk.usageMetadata as any)?.cost) gLast = chunk.usageMetadata;
  }
  t.regex(gLast?.cost ?? '', /^\d+\.\d+$/);
});
