import test from 'ava';
import Anthropic from '@anthropic-ai/sdk';
import type { Simulator } from '../../dev/simulator/app';
import { ANTHROPIC_AUTH, WEATHER_SCHEMA, channel, jsonOf, parseSse, post, requests, startSim } from './helpers';

let sim: Simulator;
let url: string;

test.before(async () => {
  ({ sim, url } = await startSim());
});
test.after.always(async () => {
  await sim?.close();
});

const client = (ch: string) => new Anthropic({ baseURL: `${url}/ch/${ch}`, apiKey: 'k', maxRetries: 0 });

test('non-streaming message through the official SDK', async (t) => {
  const ch = channel('an');
  const m = await client(ch).messages.create({
    model: 'claude-test-1',
    max_tokens: 1024,
    system: 'Be brief.',
    messages: [{ role: 'user', content: 'Hello, Claude' }],
  });
  t.is(m.type, 'message');
  t.is(m.role, 'assistant');
  t.regex(m.id, /^msg_01/);
  t.is(m.model, 'claude-test-1');
  t.is(m.stop_reason, 'end_turn');
  t.is(m.stop_sequence, null);
  t.is(m.content.length, 1);
  t.is(m.content[0].type, 'text');
  t.is((m.content[0] as Anthropic.TextBlock).text.split(' ').length, 24);
  t.is(m.usage.input_tokens, 6); // ceil((13 + 9) / 4)
  t.is(m.usage.output_tokens, 24);
  t.is(m.usage.cache_creation_input_tokens, 0);
  t.is(m.usage.cache_read_input_tokens, 0);

  // SDK 1.x sends the key as a Bearer token and pins API version 2026-10-21.
  const log = await requests(url, ch);
  t.is(log.requests[0].headers.authorization, 'Bearer k');
  t.is(log.requests[0].headers['anthropic-version'], '2026-10-21');
});

test('sampling parameters: accepted on 2023-06-01, a 400 from API version 2026-10-21', async (t) => {
  const path = `/ch/${channel('an')}/v1/messages`;
  const body = { model: 'c', max_tokens: 5, temperature: 0.2, messages: [{ role: 'user', content: 'x' }] };
  const old = await post(url, path, body, ANTHROPIC_AUTH);
  t.is(old.status, 200);
  const r = await post(url, path, body, { ...ANTHROPIC_AUTH, 'anthropic-version': '2026-10-21' });
  t.is(r.status, 400);
  const j = await jsonOf(r);
  t.is(j.error.type, 'invalid_request_error');
  t.regex(j.error.message, /^temperature:/);
  const err = await t.throwsAsync(client(channel('an')).messages.create({ ...body, top_k: 5 } as any));
  t.true(err instanceof Anthropic.BadRequestError);
  const ok = await post(url, path, { ...body, temperature: undefined }, { ...ANTHROPIC_AUTH, 'anthropic-version': '2026-10-21' });
  t.is(ok.status, 200);
});

test('x-api-key works as well as a Bearer token', async (t) => {
  const r = await post(url, `/ch/${channel('an')}/v1/messages`, { model: 'c', max_tokens: 3, messages: [{ role: 'user', content: 'x' }] }, ANTHROPIC_AUTH);
  t.is(r.status, 200);
  const j = await jsonOf(r);
  t.is(j.usage.output_tokens, 3);
});

test('max_tokens below the default caps output with stop_reason max_tokens', async (t) => {
  const m = await client(channel('an')).messages.create({ model: 'c', max_tokens: 4, messages: [{ role: 'user', content: 'Hello' }] });
  t.is(m.stop_reason, 'max_tokens');
  t.is(m.usage.output_tokens, 4);
  t.is((m.content[0] as Anthropic.TextBlock).text.split(' ').length, 4);
});

test('streaming through the SDK accumulates the same message', async (t) => {
  const ch = channel('an');
  const params = { model: 'c', max_tokens: 7, messages: [{ role: 'user' as const, content: 'stream me' }] };
  const stream = client(ch).messages.stream(params);
  const types: string[] = [];
  stream.on('streamEvent', (e) => types.push(e.type));
  const final = await stream.finalMessage();
  t.deepEqual(types, [
    'message_start',
    'content_block_start',
    ...Array(7).fill('content_block_delta'),
    'content_block_stop',
    'message_delta',
    'message_stop',
  ]);
  t.is(final.stop_reason, 'max_tokens');
  t.is(final.usage.output_tokens, 7);
  t.is(final.usage.input_tokens, 3);
  const whole = await client(ch).messages.create(params);
  t.is((final.content[0] as Anthropic.TextBlock).text, (whole.content[0] as Anthropic.TextBlock).text);
});

test('raw stream framing: event line matches data.type, ping included', async (t) => {
  const r = await post(url, `/ch/${channel('an')}/v1/messages`, { model: 'c', max_tokens: 2, stream: true, messages: [{ role: 'user', content: 'hi' }] }, ANTHROPIC_AUTH);
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type')!, /^text\/event-stream/);
  const events = parseSse(await r.text());
  t.deepEqual(
    events.map((e) => e.event),
    ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
  );
  for (const e of events) t.is(JSON.parse(e.data).type, e.event);
  const start = JSON.parse(events[0].data);
  t.deepEqual(start.message.content, []);
  t.is(start.message.stop_reason, null);
  t.is(start.message.usage.input_tokens, 1);
  const delta = JSON.parse(events[3].data);
  t.is(delta.delta.type, 'text_delta');
  const md = JSON.parse(events[6].data);
  t.deepEqual(md.delta, { stop_reason: 'max_tokens', stop_sequence: null });
  t.is(md.usage.output_tokens, 2);
});

const tools: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'Weather', input_schema: WEATHER_SCHEMA as Anthropic.Tool.InputSchema },
  { name: 'get_time', input_schema: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'] } },
];

test('tool_use block, forced tool, tool_choice none', async (t) => {
  const ch = channel('an');
  const m = await client(ch).messages.create({ model: 'c', max_tokens: 100, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
  t.is(m.stop_reason, 'tool_use');
  const block = m.content[0] as Anthropic.ToolUseBlock;
  t.is(block.type, 'tool_use');
  t.regex(block.id, /^toolu_01/);
  t.is(block.name, 'get_weather');
  t.deepEqual(Object.keys(block.input as object).sort(), ['city', 'unit']);

  const forced = await client(ch).messages.create({
    model: 'c',
    max_tokens: 100,
    tools,
    tool_choice: { type: 'tool', name: 'get_time' },
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
  });
  t.is((forced.content[0] as Anthropic.ToolUseBlock).name, 'get_time');

  const none = await client(ch).messages.create({ model: 'c', max_tokens: 100, tools, tool_choice: { type: 'none' }, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
  t.is(none.stop_reason, 'end_turn');
  t.is(none.content[0].type, 'text');
});

test('after a tool_result the model answers with text', async (t) => {
  const m = await client(channel('an')).messages.create({
    model: 'c',
    max_tokens: 100,
    tools,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '21C and sunny' }] },
    ],
  });
  t.is(m.stop_reason, 'end_turn');
  t.is(m.content[0].type, 'text');
});

test('streamed tool_use: input_json_delta pieces reassemble into the input', async (t) => {
  const ch = channel('an');
  const stream = client(ch).messages.stream({ model: 'c', max_tokens: 100, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
  const partials: string[] = [];
  stream.on('inputJson', (delta) => partials.push(delta));
  const final = await stream.finalMessage();
  const block = final.content[0] as Anthropic.ToolUseBlock;
  t.is(final.stop_reason, 'tool_use');
  t.is(block.name, 'get_weather');
  t.true(partials.length > 1);
  t.deepEqual(JSON.parse(partials.join('')), block.input);
  t.is(final.usage.output_tokens, partials.length);
  const plain = await client(ch).messages.create({ model: 'c', max_tokens: 100, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
  t.deepEqual((plain.content[0] as Anthropic.ToolUseBlock).input, block.input);
});

test('header and body validation use the Anthropic error shape', async (t) => {
  const path = `/ch/${channel('an')}/v1/messages`;
  const good = { model: 'c', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] };

  let r = await post(url, path, good, { 'anthropic-version': '2023-06-01' });
  t.is(r.status, 401);
  let j = await jsonOf(r);
  t.is(j.type, 'error');
  t.is(j.error.type, 'authentication_error');

  r = await post(url, path, good, { 'x-api-key': 'k' });
  t.is(r.status, 400);
  j = await jsonOf(r);
  t.is(j.error.type, 'invalid_request_error');
  t.regex(j.error.message, /anthropic-version/);

  r = await post(url, path, { model: 'c', messages: good.messages }, ANTHROPIC_AUTH);
  t.is(r.status, 400);
  t.is((await jsonOf(r)).error.message, 'max_tokens: Field required');

  r = await post(url, path, { max_tokens: 5, messages: good.messages }, ANTHROPIC_AUTH);
  t.is((await jsonOf(r)).error.message, 'model: Field required');

  r = await post(url, path, { model: 'c', max_tokens: 5 }, ANTHROPIC_AUTH);
  t.is((await jsonOf(r)).error.message, 'messages: Field required');

  r = await post(url, path, { model: 'c', max_tokens: 5, messages: [{ role: 'system', content: 'x' }] }, ANTHROPIC_AUTH);
  t.is(r.status, 400);

  const err = await t.throwsAsync(client(channel('an')).messages.create({ model: 'c', messages: good.messages } as any));
  t.true(err instanceof Anthropic.BadRequestError);
});
