import test from 'ava';
import OpenAI from 'openai';
import { inflateSync } from 'node:zlib';
import type { Simulator } from '../../dev/simulator/app';
import { crc32 } from '../../dev/simulator/png';
import { OPENAI_AUTH, WEATHER_SCHEMA, channel, jsonOf, parseSse, post, setUsage, startSim } from './helpers';

let sim: Simulator;
let url: string;

test.before(async () => {
  ({ sim, url } = await startSim());
});
test.after.always(async () => {
  await sim?.close();
});

const client = (ch: string) => new OpenAI({ baseURL: `${url}/ch/${ch}/v1`, apiKey: 'k', maxRetries: 0 });
const input = [{ role: 'user' as const, content: 'Tell me a story' }];

test('non-streaming response through the official SDK', async (t) => {
  const r = await client(channel('rs')).responses.create({ model: 'gpt-5', input, instructions: 'Be brief.' });
  t.is(r.object, 'response');
  t.regex(r.id, /^resp_/);
  t.is(r.status, 'completed');
  t.is(r.instructions, 'Be brief.');
  t.is(r.output.length, 1);
  const msg = r.output[0] as OpenAI.Responses.ResponseOutputMessage;
  t.is(msg.type, 'message');
  t.is(msg.role, 'assistant');
  t.regex(msg.id, /^msg_/);
  t.is(r.output_text.split(' ').length, 24);
  // ceil((15 + 9) / 4) = 6
  t.is(r.usage!.input_tokens, 6);
  t.is(r.usage!.output_tokens, 24);
  t.is(r.usage!.total_tokens, 30);
  t.is(r.usage!.input_tokens_details.cached_tokens, 0);
  t.is(r.usage!.output_tokens_details.reasoning_tokens, 0);
});

test('a string input works; max_output_tokens gives status incomplete', async (t) => {
  const r = await client(channel('rs')).responses.create({ model: 'gpt-5', input: 'Tell me a story', max_output_tokens: 4 });
  t.is(r.status, 'incomplete');
  t.deepEqual(r.incomplete_details, { reason: 'max_output_tokens' });
  t.is(r.output_text.split(' ').length, 4);
  t.is(r.usage!.output_tokens, 4);
  // Same seed as the array form.
  const arr = await client(channel('rs')).responses.create({ model: 'gpt-5', input, max_output_tokens: 4 });
  t.is(arr.output_text, r.output_text);
});

test('streaming events via the SDK: order, item ids, strictly increasing sequence_number', async (t) => {
  const stream = await client(channel('rs')).responses.create({ model: 'gpt-5', input, stream: true, max_output_tokens: 100 });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const e of stream) events.push(e);
  t.deepEqual(
    events.map((e) => e.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array(24).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  events.forEach((e, i) => t.is(e.sequence_number, i));
  const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
  t.is(created.response.status, 'in_progress');
  t.is(created.response.usage as unknown, null);
  const added = events[2] as OpenAI.Responses.ResponseOutputItemAddedEvent;
  const deltas = events.filter((e): e is OpenAI.Responses.ResponseTextDeltaEvent => e.type === 'response.output_text.delta');
  t.true(deltas.every((d) => d.item_id === added.item.id && d.output_index === 0 && d.content_index === 0));
  const done = events.find((e): e is OpenAI.Responses.ResponseTextDoneEvent => e.type === 'response.output_text.done')!;
  t.is(done.text, deltas.map((d) => d.delta).join(''));
  const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
  t.is(completed.response.status, 'completed');
  t.is(completed.response.usage!.output_tokens, 24);
  t.is(completed.response.id, created.response.id);
});

test('SDK stream helper gives the final response', async (t) => {
  const s = client(channel('rs')).responses.stream({ model: 'gpt-5', input });
  let text = '';
  s.on('response.output_text.delta', (e) => (text += e.delta));
  const final = await s.finalResponse();
  const msg = final.output[0] as OpenAI.Responses.ResponseOutputMessage;
  t.is((msg.content[0] as OpenAI.Responses.ResponseOutputText).text, text);
  t.is(text.split(' ').length, 24);
  t.is(final.status, 'completed');
});

test('reasoning item comes first when reasoning is requested', async (t) => {
  const ch = channel('rs');
  await setUsage(url, ch, { reasoning_tokens: 12 });
  const r = await client(ch).responses.create({ model: 'gpt-5', input, reasoning: { effort: 'low' } });
  t.deepEqual(r.output.map((o) => o.type), ['reasoning', 'message']);
  t.deepEqual((r.output[0] as OpenAI.Responses.ResponseReasoningItem).summary, []);
  t.is(r.reasoning!.effort, 'low');
  t.true('context' in (r.reasoning as object), 'reasoning{context, effort, summary} (spec 1 section 4.4)');
  t.is(r.usage!.output_tokens_details.reasoning_tokens, 12);
  t.is(r.usage!.output_tokens, 24 + 12);

  const stream = await client(ch).responses.create({ model: 'gpt-5', input, reasoning: { effort: 'low' }, stream: true });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const e of stream) events.push(e);
  const firstItem = events.find((e) => e.type === 'response.output_item.added') as OpenAI.Responses.ResponseOutputItemAddedEvent;
  t.is(firstItem.item.type, 'reasoning');
  t.is(firstItem.output_index, 0);
  const msgItem = events.filter((e) => e.type === 'response.output_item.added')[1] as OpenAI.Responses.ResponseOutputItemAddedEvent;
  t.is(msgItem.output_index, 1);
});

const tools: OpenAI.Responses.Tool[] = [
  { type: 'function', name: 'get_weather', description: 'Weather', parameters: WEATHER_SCHEMA, strict: true },
  { type: 'function', name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'] }, strict: false },
];

test('function_call item and streamed arguments', async (t) => {
  const ch = channel('rs');
  const r = await client(ch).responses.create({ model: 'gpt-5', input: 'weather in Paris?', tools });
  t.is(r.output.length, 1);
  const fc = r.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
  t.is(fc.type, 'function_call');
  t.is(fc.name, 'get_weather');
  t.regex(fc.call_id, /^call_/);
  t.deepEqual(Object.keys(JSON.parse(fc.arguments)).sort(), ['city', 'unit']);

  const forced = await client(ch).responses.create({ model: 'gpt-5', input: 'weather in Paris?', tools, tool_choice: { type: 'function', name: 'get_time' } });
  t.is((forced.output[0] as OpenAI.Responses.ResponseFunctionToolCall).name, 'get_time');

  const stream = await client(ch).responses.create({ model: 'gpt-5', input: 'weather in Paris?', tools, stream: true });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const e of stream) events.push(e);
  const types = events.map((e) => e.type);
  t.is(types[2], 'response.output_item.added');
  t.true(types.includes('response.function_call_arguments.delta'));
  const argsDone = events.find((e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent => e.type === 'response.function_call_arguments.done')!;
  const deltas = events.filter((e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDeltaEvent => e.type === 'response.function_call_arguments.delta');
  t.is(deltas.map((d) => d.delta).join(''), argsDone.arguments);
  t.is(argsDone.arguments, fc.arguments);
  t.is(types.at(-1), 'response.completed');
  events.forEach((e, i) => t.is(e.sequence_number, i));

  const after = await client(ch).responses.create({
    model: 'gpt-5',
    tools,
    input: [
      { role: 'user', content: 'weather in Paris?' },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '21C' },
    ],
  });
  t.is(after.output[0].type, 'message');
});

function checkPng(b64: string): { width: number; height: number } {
  const buf = Buffer.from(b64, 'base64');
  if (!buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error('bad signature');
  let off = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.subarray(off + 4, off + 8).toString('latin1');
    const data = buf.subarray(off + 8, off + 8 + len);
    if (crc32(buf.subarray(off + 4, off + 8 + len)) !== buf.readUInt32BE(off + 8 + len)) throw new Error(`bad crc in ${type}`);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
    }
    if (type === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  if (raw.length !== height * (1 + width * 3)) throw new Error('bad pixel data');
  return { width, height };
}

test('image_generation tool gives an image_generation_call with a real PNG', async (t) => {
  const ch = channel('rs');
  const r = await client(ch).responses.create({ model: 'gpt-5', input: 'draw a cat', tools: [{ type: 'image_generation', size: '1024x1024' }] });
  t.deepEqual(r.output.map((o) => o.type), ['image_generation_call', 'message']);
  const ig = r.output[0] as OpenAI.Responses.ResponseOutputItem.ImageGenerationCall;
  t.is(ig.status, 'completed');
  t.deepEqual(checkPng(ig.result!), { width: 8, height: 8 });

  const stream = await client(ch).responses.create({ model: 'gpt-5', input: 'draw a cat', tools: [{ type: 'image_generation' }], stream: true });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const e of stream) events.push(e);
  const types = events.map((e) => e.type);
  t.deepEqual(types.slice(2, 7), [
    'response.output_item.added',
    'response.image_generation_call.in_progress',
    'response.image_generation_call.generating',
    'response.image_generation_call.completed',
    'response.output_item.done',
  ]);
  const done = events[6] as OpenAI.Responses.ResponseOutputItemDoneEvent;
  t.is((done.item as OpenAI.Responses.ResponseOutputItem.ImageGenerationCall).result, ig.result);
});

test('web_search tool adds a web_search_call item', async (t) => {
  const r = await client(channel('rs')).responses.create({ model: 'gpt-5', input: 'latest news about rivers', tools: [{ type: 'web_search' }] });
  t.deepEqual(r.output.map((o) => o.type), ['web_search_call', 'message']);
  const ws = r.output[0] as OpenAI.Responses.ResponseFunctionWebSearch;
  t.is(ws.status, 'completed');
  t.deepEqual(ws.action, { type: 'search', query: 'latest news about rivers' });
});

test('usage override on responses', async (t) => {
  const ch = channel('rs');
  await setUsage(url, ch, { prompt_tokens: 250000, cached_tokens: 200000, output_tokens: 50 });
  const r = await client(ch).responses.create({ model: 'gpt-5', input });
  t.deepEqual(r.usage, {
    input_tokens: 250000,
    input_tokens_details: { cached_tokens: 200000 },
    output_tokens: 50,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 250050,
  });
});

test('raw SSE framing: event name equals data.type', async (t) => {
  const r = await post(url, `/ch/${channel('rs')}/v1/responses`, { model: 'gpt-5', input: 'hi', stream: true, max_output_tokens: 2 }, OPENAI_AUTH);
  t.regex(r.headers.get('content-type')!, /^text\/event-stream/);
  const events = parseSse(await r.text());
  t.is(events.length, 4 + 2 + 4);
  let prev = -1;
  for (const e of events) {
    const d = JSON.parse(e.data);
    t.is(d.type, e.event);
    t.true(d.sequence_number > prev);
    prev = d.sequence_number;
  }
  t.is(events.at(-1)!.event, 'response.incomplete');
});

test('validation errors in the OpenAI shape', async (t) => {
  const path = `/ch/${channel('rs')}/v1/responses`;
  let r = await post(url, path, { model: 'gpt-5', input: 'x' });
  t.is(r.status, 401);
  r = await post(url, path, { input: 'x' }, OPENAI_AUTH);
  t.is(r.status, 400);
  let j = await jsonOf(r);
  t.is(j.error.param, 'model');
  t.is(j.error.code, 'missing_required_parameter');
  r = await post(url, path, { model: 'gpt-5', input: 'x', previous_response_id: 'resp_123' }, OPENAI_AUTH);
  t.is(r.status, 400);
  j = await jsonOf(r);
  t.is(j.error.code, 'previous_response_not_found');
});
