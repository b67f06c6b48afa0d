import test from 'ava';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { startGateway, type TestGateway } from '../helpers/stack';
import { usageRow } from './helpers';

let gw: TestGateway;
let key: string;
let accountId: string;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  accountId = (await gw.newAccount()).id;
  key = (await gw.newKey(accountId)).key;
});
test.after.always(async () => gw?.close());

const openai = () => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

test('openai: chat non-streaming, with usage and a charge', async (t) => {
  const own = await gw.newAccount();
  const ownKey = (await gw.newKey(own.id)).key;
  const before = await gw.deps.wallet.balance(own.id);
  const { data: r, response } = await new OpenAI({ apiKey: ownKey, baseURL: `${gw.url}/v1`, maxRetries: 0 }).chat.completions
    .create({ model: 'gpt-5.1', messages: [{ role: 'user', content: 'Hello there, gateway' }], max_tokens: 20 })
    .withResponse();
  // The charge is settled right after the answer went out: its usage row marks the end.
  t.truthy(await usageRow(gw, response.headers.get('x-gateway-trace')!));
  t.is(r.object, 'chat.completion');
  t.truthy(r.choices[0].message.content);
  t.true(r.usage!.prompt_tokens > 0);
  t.true(r.usage!.completion_tokens > 0);
  const after = await gw.deps.wallet.balance(own.id);
  const expected = Math.round(r.usage!.prompt_tokens * 1250 + r.usage!.completion_tokens * 10000);
  t.is(before - after, expected);
});

test('openai: chat streaming with include_usage', async (t) => {
  const stream = await openai().chat.completions.create({
    model: 'gpt-5.1', messages: [{ role: 'user', content: 'Stream me something' }], stream: true, stream_options: { include_usage: true }, max_tokens: 12,
  });
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  t.true(text.length > 0);
  t.is(usage?.completion_tokens, 12);
});

test('openai: tool calls', async (t) => {
  const r = await openai().chat.completions.create({
    model: 'gpt-5.1',
    messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    tools: [{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
  });
  t.is(r.choices[0].finish_reason, 'tool_calls');
  t.is(r.choices[0].message.tool_calls?.[0].type, 'function');
});

test('openai client -> messages-protocol model through gateway translation', async (t) => {
  const raw = await openai().chat.completions
    .create({ model: 'claude-sonnet-4-5', messages: [{ role: 'system', content: 'Be brief' }, { role: 'user', content: 'Hi Claude' }], max_tokens: 10, response_format: { type: 'json_object' } })
    .withResponse();
  t.is(raw.response.headers.get('x-protocol-translation'), 'chat-completions_to_messages');
  t.is(raw.response.headers.get('x-protocol-warning'), 'response_format');
  t.is(raw.data.object, 'chat.completion');
  t.true(raw.data.usage!.completion_tokens > 0);
  const stream = await openai().chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true }, max_tokens: 8 });
  let text = '';
  let usage;
  for await (const c of stream) {
    text += c.choices[0]?.delta?.content ?? '';
    if (c.usage) usage = c.usage;
  }
  t.true(text.length > 0);
  t.truthy(usage);
});

test('openai: responses streaming events', async (t) => {
  const stream = await openai().responses.create({ model: 'gpt-5.1', input: [{ role: 'user', content: 'Tell me' }], instructions: 'be nice', stream: true, max_output_tokens: 200 });
  const types: string[] = [];
  let last = -1;
  for await (const ev of stream) {
    types.push(ev.type);
    t.true(ev.sequence_number > last);
    last = ev.sequence_number;
  }
  t.is(types[0], 'response.created');
  t.is(types.at(-1), 'response.completed');
  t.true(types.includes('response.output_text.delta'));
});

test('anthropic: messages streaming and not', async (t) => {
  const client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  const m = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] });
  t.is(m.type, 'message');
  t.true(m.usage.output_tokens > 0);
  const stream = client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] });
  const final = await stream.finalMessage();
  t.true(final.content.length > 0);
});

test('google: generateContent and stream', async (t) => {
  const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
  const r = await ai.models.generateContent({ model: 'gemini-2.5-pro', contents: 'Hello Gemini' });
  t.truthy(r.text);
  t.true((r.usageMetadata?.totalTokenCount ?? 0) > 0);
  let text = '';
  for await (const c of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Stream please' })) text += c.text ?? '';
  t.true(text.length > 0);
});
