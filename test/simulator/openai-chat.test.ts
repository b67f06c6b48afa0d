import test from 'ava';
import OpenAI from 'openai';
import type { Simulator } from '../../dev/simulator/app';
import { WORDS } from '../../dev/simulator/text';
import { OPENAI_AUTH, WEATHER_SCHEMA, channel, jsonOf, post, requests, startSim } from './helpers';

let sim: Simulator;
let url: string;

test.before(async () => {
  ({ sim, url } = await startSim());
});
test.after.always(async () => {
  await sim?.close();
});

const client = (ch: string) => new OpenAI({ baseURL: `${url}/ch/${ch}/v1`, apiKey: 'k', maxRetries: 0 });

test('non-streaming completion through the official SDK', async (t) => {
  const ch = channel('oc');
  const c = await client(ch).chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Tell me about rivers' },
    ],
  });
  t.is(c.object, 'chat.completion');
  t.regex(c.id, /^chatcmpl-/);
  t.is(c.model, 'gpt-4o-mini');
  t.is(c.choices.length, 1);
  t.is(c.choices[0].message.role, 'assistant');
  t.is(c.choices[0].finish_reason, 'stop');
  const words = c.choices[0].message.content!.split(' ');
  t.is(words.length, 24);
  t.true(words.every((w) => WORDS.includes(w)));
  // prompt = ceil((14 + 20) / 4) = 9
  t.is(c.usage!.prompt_tokens, 9);
  t.is(c.usage!.completion_tokens, 24);
  t.is(c.usage!.total_tokens, 33);
  t.is(c.usage!.prompt_tokens_details!.cached_tokens, 0);
  t.is(c.usage!.completion_tokens_details!.reasoning_tokens, 0);
  t.is((c.usage as any).num_server_side_tools_used, 0);
});

test('output is deterministic per last user message and capped by max_tokens', async (t) => {
  const ch = channel('oc');
  const ask = (content: string, extra: Record<string, unknown> = {}) =>
    client(ch).chat.completions.create({ model: 'm', messages: [{ role: 'user', content }], ...extra });
  const a1 = await ask('alpha question');
  const a2 = await ask('alpha question');
  const b = await ask('a different question');
  t.is(a1.choices[0].message.content, a2.choices[0].message.content);
  t.not(a1.choices[0].message.content, b.choices[0].message.content);

  const capped = await ask('alpha question', { max_tokens: 5 });
  t.is(capped.choices[0].finish_reason, 'length');
  t.is(capped.usage!.completion_tokens, 5);
  t.is(capped.choices[0].message.content, a1.choices[0].message.content!.split(' ').slice(0, 5).join(' '));

  const mct = await ask('alpha question', { max_completion_tokens: 3 });
  t.is(mct.usage!.completion_tokens, 3);
  t.is(mct.choices[0].finish_reason, 'length');

  const roomy = await ask('alpha question', { max_tokens: 1000 });
  t.is(roomy.choices[0].finish_reason, 'stop');
  t.is(roomy.usage!.completion_tokens, 24);
});

test('streaming through the SDK: role first, content deltas, finish chunk, usage chunk', async (t) => {
  const ch = channel('oc');
  const stream = await client(ch).chat.completions.create({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'stream please' }],
    max_tokens: 6,
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  t.is(chunks.length, 1 + 6 + 1 + 1);
  t.true(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id));
  t.is(chunks[0].choices[0].delta.role, 'assistant');
  const text = chunks.slice(1, 7).map((c) => c.choices[0].delta.content).join('');
  t.is(text.split(' ').length, 6);
  t.is(chunks[7].choices[0].finish_reason, 'length');
  t.deepEqual(chunks[8].choices, []);
  t.is(chunks[8].usage!.completion_tokens, 6);
  t.is(chunks[8].usage!.prompt_tokens, 4); // ceil(13 / 4)

  // Same request without streaming gives the same text.
  const whole = await client(ch).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'stream please' }], max_tokens: 6 });
  t.is(whole.choices[0].message.content, text);
});

test('streaming without include_usage has no usage chunk', async (t) => {
  const stream = await client(channel('oc')).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 2, stream: true });
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  t.is(chunks.length, 4);
  t.is(chunks[3].choices[0].finish_reason, 'length');
  t.true(chunks.every((c) => c.usage === undefined || c.usage === null));
});

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: WEATHER_SCHEMA } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'] } } },
];

test('tool call: first function by default, forced function when tool_choice names one', async (t) => {
  const ch = channel('oc');
  const c = await client(ch).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'weather in Paris?' }], tools });
  t.is(c.choices[0].finish_reason, 'tool_calls');
  t.is(c.choices[0].message.content, null);
  const call = c.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
  t.regex(call.id, /^call_/);
  t.is(call.type, 'function');
  t.is(call.function.name, 'get_weather');
  const args = JSON.parse(call.function.arguments);
  t.deepEqual(Object.keys(args).sort(), ['city', 'unit']);
  t.is(typeof args.city, 'string');
  t.true(['celsius', 'fahrenheit'].includes(args.unit));
  t.is(c.usage!.completion_tokens, Math.ceil(call.function.arguments.length / 4));

  const again = await client(ch).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'weather in Paris?' }], tools });
  t.is((again.choices[0].message.tool_calls![0] as any).function.arguments, call.function.arguments);

  const forced = await client(ch).chat.completions.create({
    model: 'm',
    messages: [{ role: 'user', content: 'weather in Paris?' }],
    tools,
    tool_choice: { type: 'function', function: { name: 'get_time' } },
  });
  const fc = forced.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
  t.is(fc.function.name, 'get_time');
  t.deepEqual(Object.keys(JSON.parse(fc.function.arguments)), ['tz']);

  const none = await client(ch).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'weather in Paris?' }], tools, tool_choice: 'none' });
  t.is(none.choices[0].finish_reason, 'stop');
  t.is(none.choices[0].message.tool_calls, undefined);
});

test('after a tool result the model answers with text', async (t) => {
  const c = await client(channel('oc')).chat.completions.create({
    model: 'm',
    tools,
    messages: [
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp": 21}' },
    ],
  });
  t.is(c.choices[0].finish_reason, 'stop');
  t.is(typeof c.choices[0].message.content, 'string');
});

test('streamed tool call: id and name first, argument pieces, finish_reason tool_calls', async (t) => {
  const stream = await client(channel('oc')).chat.completions.create({
    model: 'm',
    messages: [{ role: 'user', content: 'weather in Paris?' }],
    tools,
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  const first = chunks[0].choices[0].delta.tool_calls![0];
  t.is(first.index, 0);
  t.regex(first.id!, /^call_/);
  t.is(first.function!.name, 'get_weather');
  t.is(first.function!.arguments, '');
  const pieces = chunks.slice(1).flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((tc) => tc.function!.arguments);
  const args = JSON.parse(pieces.join(''));
  t.truthy(args.city);
  const finish = chunks.find((c) => c.choices[0]?.finish_reason);
  t.is(finish!.choices[0].finish_reason, 'tool_calls');
  t.is(chunks[chunks.length - 1].usage!.completion_tokens, pieces.length);
});

test('SDK stream helper accumulates the tool call', async (t) => {
  const runner = client(channel('oc')).chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'weather?' }], tools });
  const final = await runner.finalChatCompletion();
  const tc = final.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
  t.is(tc.function.name, 'get_weather');
  t.truthy(JSON.parse(tc.function.arguments).city);
});

test('built-in tools are counted in num_server_side_tools_used (xAI)', async (t) => {
  const body = {
    model: 'grok-4',
    messages: [{ role: 'user', content: 'news?' }],
    tools: [{ type: 'web_search' }, { type: 'x_search' }],
  };
  const r = await post(url, `/ch/${channel('oc')}/v1/chat/completions`, body, OPENAI_AUTH);
  const j = await jsonOf(r);
  t.is(j.usage.num_server_side_tools_used, 2);
  t.is(j.choices[0].finish_reason, 'stop');
});

test('auth and validation errors use the OpenAI error shape', async (t) => {
  const ch = channel('oc');
  const path = `/ch/${ch}/v1/chat/completions`;
  const good = { model: 'm', messages: [{ role: 'user', content: 'x' }] };

  let r = await post(url, path, good);
  t.is(r.status, 401);
  let j = await jsonOf(r);
  t.is(j.error.type, 'invalid_request_error');
  t.regex(j.error.message, /didn't provide an API key/);
  t.true('param' in j.error && 'code' in j.error);

  r = await post(url, path, { messages: good.messages }, OPENAI_AUTH);
  t.is(r.status, 400);
  j = await jsonOf(r);
  t.is(j.error.message, 'you must provide a model parameter');

  r = await post(url, path, { model: 'm' }, OPENAI_AUTH);
  t.is(r.status, 400);
  j = await jsonOf(r);
  t.is(j.error.param, 'messages');
  t.is(j.error.code, 'missing_required_parameter');

  r = await post(url, path, { model: 'm', messages: [] }, OPENAI_AUTH);
  t.is((await jsonOf(r)).error.code, 'empty_array');

  r = await post(url, path, '{not json', OPENAI_AUTH);
  t.is(r.status, 400);
  t.regex((await jsonOf(r)).error.message, /could not parse the JSON body/);

  r = await post(url, path, { ...good, stream_options: { include_usage: true } }, OPENAI_AUTH);
  t.is(r.status, 400);
  t.is((await jsonOf(r)).error.param, 'stream_options');

  // The SDK maps them to its typed errors.
  const err = await t.throwsAsync(client(ch).chat.completions.create({ model: '', messages: good.messages as any }));
  t.true(err instanceof OpenAI.BadRequestError);
  t.is((err as InstanceType<typeof OpenAI.BadRequestError>).status, 400);

  const log = await requests(url, ch);
  t.is(log.count, 7);
});

test('unprefixed paths are the default channel; unknown paths 404 in OpenAI shape', async (t) => {
  const c = await new OpenAI({ baseURL: `${url}/v1`, apiKey: 'k', maxRetries: 0 }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  t.is(c.object, 'chat.completion');
  const log = (await requests(url, 'default')).requests;
  t.true(log.some((r) => r.path === '/v1/chat/completions' && r.channel === 'default'));

  const r = await post(url, '/ch/x/v1/nope', {}, OPENAI_AUTH);
  t.is(r.status, 404);
  t.regex((await jsonOf(r)).error.message, /Invalid URL \(POST \/v1\/nope\)/);
  const bad = await post(url, '/ch/bad%20name/v1/chat/completions', {}, OPENAI_AUTH);
  t.is(bad.status, 404);
});
