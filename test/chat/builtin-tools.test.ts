// Built-in tools on POST /v1/chat/completions (spec 1 sections 4.1 and 6).
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { addFault, post, sseEvents, upstreamCount, usageRow, user } from './helpers';

let gw: TestGateway;
let key: string;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  key = (await gw.newKey((await gw.newAccount()).id)).key;
});
test.after.always(async () => gw?.close());
test.afterEach.always(async () => {
  await gw.control('POST', '/reset');
});

const WEB_SEARCH = { type: 'web_search' };
const IMAGE_GENERATION = { type: 'image_generation' };
const FUNCTION = { type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const chat = (body: Record<string, unknown>) => post(gw, '/v1/chat/completions', { messages: user('What is new in Paris?'), max_tokens: 6, ...body }, { key });

test.serial('web_search / image_generation without stream: true -> 400 invalid_request, no upstream call', async (t) => {
  for (const tools of [[WEB_SEARCH], [IMAGE_GENERATION], [FUNCTION, WEB_SEARCH]]) {
    for (const stream of [undefined, false]) {
      const r = await chat({ model: 'gpt-5.1', tools, ...(stream === undefined ? {} : { stream }) });
      t.is(r.status, 400, r.text);
      t.is(r.json.error.code, 'invalid_request');
      t.is(r.json.error.type, 'invalid_request_error');
      t.is(r.json.error.param, 'stream');
    }
  }
  t.is(await upstreamCount(gw, 'openai-a'), 0);
});

test.serial('image_generation on a model outside its family -> 400 tool_not_supported', async (t) => {
  for (const model of ['grok-4', 'claude-sonnet-4-5', 'gemini-2.5-pro', 'deepseek-v3.2']) {
    const r = await chat({ model, tools: [IMAGE_GENERATION], stream: true });
    t.is(r.status, 400, `${model}: ${r.text}`);
    t.is(r.json.error.code, 'tool_not_supported');
    t.is(r.json.error.type, 'invalid_request_error');
  }
  const ok = await chat({ model: 'gpt-5-mini', tools: [IMAGE_GENERATION], stream: true });
  t.is(ok.status, 200, ok.text);
  t.is(sseEvents(ok.text).at(-1)?.data, '[DONE]');
  t.is((await gw.control('GET', '/requests')).count, 1);
});

test.serial('web_search on a model or channel without it -> 400 tool_not_supported; with it -> streamed', async (t) => {
  // gpt-5-mini lacks the capability; claude and gemini reach chat-completions only through translation.
  for (const model of ['gpt-5-mini', 'claude-sonnet-4-5', 'gemini-2.5-flash', 'qwen3-max']) {
    const r = await chat({ model, tools: [WEB_SEARCH], stream: true });
    t.is(r.status, 400, `${model}: ${r.text}`);
    t.is(r.json.error.code, 'tool_not_supported');
  }
  t.is((await gw.control('GET', '/requests')).count, 0);
  for (const model of ['gpt-5.1', 'grok-4', 'grok-4-fast']) {
    const r = await chat({ model, tools: [WEB_SEARCH], stream: true });
    t.is(r.status, 200, `${model}: ${r.text}`);
    t.is(sseEvents(r.text).at(-1)?.data, '[DONE]');
  }
});

test.serial('function tools: fine with and without stream, on native and translated channels', async (t) => {
  for (const model of ['gpt-5.1', 'grok-4', 'claude-sonnet-4-5', 'gemini-2.5-flash']) {
    const plain = await chat({ model, tools: [FUNCTION] });
    t.is(plain.status, 200, `${model}: ${plain.text}`);
    t.is(plain.json.choices[0].finish_reason, 'tool_calls');
    const call = plain.json.choices[0].message.tool_calls[0];
    t.is(call.function.name, 'get_weather');
    t.is(typeof JSON.parse(call.function.arguments).city, 'string');

    const streamed = await chat({ model, tools: [FUNCTION], stream: true });
    t.is(streamed.status, 200);
    const events = sseEvents(streamed.text);
    t.is(events.at(-1)?.data, '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    const args = chunks.map((c) => c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '').join('');
    t.is(typeof JSON.parse(args).city, 'string', `${model}: ${args}`);
    t.is(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason, 'tool_calls');
  }
});

test.serial('mid-stream upstream failure on the built-in-tool path: error chunk, then data: [DONE]', async (t) => {
  await addFault(gw, 'openai-a', { type: 'cut', after_chunks: 3 }, 1);
  const r = await chat({ model: 'gpt-5.1', tools: [WEB_SEARCH], stream: true });
  t.is(r.status, 200);
  const events = sseEvents(r.text);
  t.is(events.at(-1)?.data, '[DONE]');
  t.deepEqual(JSON.parse(events.at(-2)!.data), { error: { message: 'upstream stream failed', type: 'api_error', code: 'upstream_error' } });
  t.is(events.length, 3 + 2, 'three relayed chunks, the error chunk, [DONE]');
  t.is(await upstreamCount(gw, 'openai-b'), 0, 'no retry after the first byte');
  const row = await usageRow(gw, r.trace);
  t.is(row.status, 'interrupted');
  t.is(row.error_code, 'upstream_cut');

  // The same on grok with an upstream error frame instead of a cut.
  await addFault(gw, 'xai-a', { type: 'error_frame', after_chunks: 2 }, 1);
  const g = await chat({ model: 'grok-4', tools: [WEB_SEARCH, FUNCTION], stream: true });
  const ge = sseEvents(g.text);
  t.is(ge.at(-1)?.data, '[DONE]');
  t.is(JSON.parse(ge.at(-2)!.data).error.code, 'upstream_error');
});

test.serial('mid-stream upstream failure without built-in tools: the stream just ends', async (t) => {
  await addFault(gw, 'openai-a', { type: 'cut', after_chunks: 3 }, 1);
  const r = await chat({ model: 'gpt-5.1', tools: [FUNCTION], stream: true });
  t.is(r.status, 200);
  const events = sseEvents(r.text);
  t.is(events.length, 3);
  t.false(r.text.includes('[DONE]'));
  t.false(r.text.includes('upstream_error'));

  await addFault(gw, 'openai-a', { type: 'cut', after_chunks: 2 }, 1);
  const plain = await chat({ model: 'gpt-5.1', stream: true });
  t.is(sseEvents(plain.text).length, 2);
  t.false(plain.text.includes('[DONE]'));

  // Translated stream: also just ends.
  await addFault(gw, 'anthropic-a', { type: 'cut', after_chunks: 4 }, 1);
  const translated = await chat({ model: 'claude-sonnet-4-5', stream: true });
  t.is(translated.status, 200);
  t.false(translated.text.includes('[DONE]'));
  t.false(translated.text.includes('upstream_error'));
  t.is(await upstreamCount(gw, 'anthropic-b'), 0);
});

test.serial('responses endpoint: the same tool rules (2 and 3), without the stream requirement', async (t) => {
  const responses = (body: Record<string, unknown>) =>
    post(gw, '/v1/responses', { input: [{ role: 'user', content: 'What is new in Paris?' }], instructions: 'Be brief.', max_output_tokens: 16, ...body }, { key });
  for (const model of ['claude-sonnet-4-5', 'grok-4']) {
    const r = await responses({ model, tools: [IMAGE_GENERATION] });
    t.is(r.status, 400, `${model}: ${r.text}`);
    t.is(r.json.error.code, 'tool_not_supported');
    t.is(r.json.error.type, 'invalid_request_error');
  }
  for (const model of ['gpt-5-mini', 'claude-sonnet-4-5']) {
    const r = await responses({ model, tools: [WEB_SEARCH] });
    t.is(r.status, 400, `${model}: ${r.text}`);
    t.is(r.json.error.code, 'tool_not_supported');
  }
  t.is((await gw.control('GET', '/requests')).count, 0);
  // Supported combinations answer, streamed or not (image_generation needs no stream here: spec 1 section 4.4).
  const image = await responses({ model: 'gpt-5-mini', tools: [IMAGE_GENERATION] });
  t.is(image.status, 200, image.text);
  t.true(image.json.output.some((o: { type: string }) => o.type === 'image_generation_call'), image.text);
  const search = await responses({ model: 'gpt-5.1', tools: [WEB_SEARCH], stream: true });
  t.is(search.status, 200, search.text);
});
