// Raw HTTP on the four chat endpoints: headers, error bodies in each
// endpoint's shape, SSE framing of each protocol.
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { post, sseEvents, upstreamCount, user, type Reply } from './helpers';

let gw: TestGateway;
let key: string;
let accountId: string;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
  accountId = (await gw.newAccount()).id;
  key = (await gw.newKey(accountId)).key;
});
test.after.always(async () => gw?.close());

const TRACE = /^req_[0-9a-f]{24}$/;
const contents = (text: string) => [{ role: 'user', parts: [{ text }] }];

function openaiError(t: any, r: Reply, status: number, code: string, type: string) {
  t.is(r.status, status, r.text);
  t.is(r.json?.error?.code, code, r.text);
  t.is(r.json?.error?.type, type, r.text);
  t.is(typeof r.json?.error?.message, 'string');
  t.regex(r.trace, TRACE);
}
function messagesError(t: any, r: Reply, status: number, type: string) {
  t.is(r.status, status, r.text);
  t.is(r.json?.type, 'error', r.text);
  t.is(r.json?.error?.type, type, r.text);
  t.is(typeof r.json?.error?.message, 'string');
  t.false('code' in (r.json?.error ?? {}), 'the messages shape has no string code');
  t.regex(r.trace, TRACE);
}
function geminiError(t: any, r: Reply, status: number, statusText: string) {
  t.is(r.status, status, r.text);
  t.is(r.json?.error?.code, status, r.text);
  t.is(r.json?.error?.status, statusText, r.text);
  t.is(typeof r.json?.error?.message, 'string');
  t.regex(r.trace, TRACE);
}

// ---------------------------------------------------------------- headers

test('x-gateway-trace on success and on errors, unique per request', async (t) => {
  const ok = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('hi'), max_tokens: 3 }, { key });
  t.is(ok.status, 200);
  t.regex(ok.trace, TRACE);
  const bad = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1' }, { key });
  t.is(bad.status, 400);
  t.regex(bad.trace, TRACE);
  const unauth = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 3, messages: user('hi') });
  t.is(unauth.status, 401);
  t.regex(unauth.trace, TRACE);
  const stream = await post(gw, '/v1/responses', { model: 'gpt-5.1', input: 'hi', stream: true, max_output_tokens: 3 }, { key });
  t.is(stream.status, 200);
  t.regex(stream.trace, TRACE);
  t.is(new Set([ok.trace, bad.trace, unauth.trace, stream.trace]).size, 4);
});

test('X-Protocol-Translation only on translated responses; X-Protocol-Warning only when fields were dropped', async (t) => {
  const native = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('hi'), max_tokens: 3, response_format: { type: 'json_object' }, n: 1 }, { key });
  t.is(native.status, 200);
  t.is(native.headers.get('x-protocol-translation'), null);
  t.is(native.headers.get('x-protocol-warning'), null);

  const nativeMessages = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 3, messages: user('hi') }, { key });
  t.is(nativeMessages.status, 200);
  t.is(nativeMessages.headers.get('x-protocol-translation'), null);

  // Upstream-side conversion: bytes passed through, no translation header.
  const converted = await post(gw, '/v1/responses', { model: 'claude-sonnet-4-5', input: [{ role: 'user', content: 'hi' }], instructions: 'be brief', max_output_tokens: 3 }, { key });
  t.is(converted.status, 200, converted.text);
  t.is(converted.headers.get('x-protocol-translation'), null);

  const clean = await post(gw, '/v1/chat/completions', { model: 'claude-sonnet-4-5', messages: user('hi'), max_tokens: 3 }, { key });
  t.is(clean.status, 200);
  t.is(clean.headers.get('x-protocol-translation'), 'chat-completions_to_messages');
  t.is(clean.headers.get('x-protocol-warning'), null);
  t.is(clean.json.object, 'chat.completion');

  const one = await post(gw, '/v1/chat/completions', { model: 'claude-sonnet-4-5', messages: user('hi'), max_tokens: 3, response_format: { type: 'json_object' } }, { key });
  t.is(one.headers.get('x-protocol-warning'), 'response_format');

  const two = await post(gw, '/v1/chat/completions', { model: 'claude-sonnet-4-5', messages: user('hi'), max_tokens: 3, response_format: { type: 'json_object' }, n: 2 }, { key });
  t.is(two.status, 200);
  t.deepEqual(two.headers.get('x-protocol-warning')?.split('; ').sort(), ['n', 'response_format']);
  t.true(two.headers.get('x-protocol-warning')!.includes('; '));

  const gemini = await post(gw, '/v1/chat/completions', { model: 'gemini-2.5-flash', messages: user('hi'), max_tokens: 3 }, { key });
  t.is(gemini.status, 200);
  t.is(gemini.headers.get('x-protocol-translation'), 'chat-completions_to_generate-content');
  t.is(gemini.headers.get('x-protocol-warning'), null);

  // The headers are on translated streams too.
  const stream = await post(gw, '/v1/chat/completions', { model: 'claude-haiku-4-5', messages: user('hi'), max_tokens: 3, stream: true, response_format: { type: 'json_object' } }, { key });
  t.is(stream.status, 200);
  t.is(stream.headers.get('x-protocol-translation'), 'chat-completions_to_messages');
  t.is(stream.headers.get('x-protocol-warning'), 'response_format');
  t.is(sseEvents(stream.text).at(-1)?.data, '[DONE]');

  // A translated stream relays one choice: n is not asked of the upstream (whose other candidates would be billed unseen).
  const streamN = await post(gw, '/v1/chat/completions', { model: 'gemini-2.5-flash', messages: user('hi'), max_tokens: 3, stream: true, n: 2 }, { key });
  t.is(streamN.status, 200);
  t.is(streamN.headers.get('x-protocol-warning'), 'n');
});

// ---------------------------------------------------------------- bad input

test.serial('bad bodies: 400 naming the field, in each endpoint shape', async (t) => {
  const chat = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: [{ role: 'wizard', content: 'x' }] }, { key });
  openaiError(t, chat, 400, 'invalid_request', 'invalid_request_error');
  t.regex(chat.json.error.message, /messages\[0\]\.role/);
  t.is(chat.json.error.param, 'messages.0.role');

  const noMessages = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1' }, { key });
  openaiError(t, noMessages, 400, 'invalid_request', 'invalid_request_error');
  t.regex(noMessages.json.error.message, /^messages/);

  const temperature = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('x'), temperature: 'hot' }, { key });
  openaiError(t, temperature, 400, 'invalid_request', 'invalid_request_error');
  t.regex(temperature.json.error.message, /temperature/);

  const notJson = await post(gw, '/v1/chat/completions', '{"model": "gpt-5.1", ', { key });
  openaiError(t, notJson, 400, 'invalid_request', 'invalid_request_error');

  const noMax = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', messages: user('x') }, { key });
  messagesError(t, noMax, 400, 'invalid_request_error');
  t.regex(noMax.json.error.message, /max_tokens/);

  const badRole = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'system', content: 'x' }] }, { key });
  messagesError(t, badRole, 400, 'invalid_request_error');
  t.regex(badRole.json.error.message, /messages\[0\]\.role/);

  const badVersion = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 5, messages: user('x') }, { key, headers: { 'anthropic-version': 'latest' } });
  messagesError(t, badVersion, 400, 'invalid_request_error');
  t.regex(badVersion.json.error.message, /anthropic-version/);
  // Present but empty is not a date either (the OpenAPI document's pattern; schemathesis sends it).
  const emptyVersion = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 5, messages: user('x') }, { key, headers: { 'anthropic-version': '' } });
  messagesError(t, emptyVersion, 400, 'invalid_request_error');

  const prev = await post(gw, '/v1/responses', { model: 'gpt-5.1', input: 'x', previous_response_id: 'resp_123' }, { key });
  openaiError(t, prev, 400, 'invalid_request', 'invalid_request_error');
  t.is(prev.json.error.param, 'previous_response_id');
  t.regex(prev.json.error.message, /previous_response_id/);

  const noInput = await post(gw, '/v1/responses', { model: 'gpt-5.1' }, { key });
  openaiError(t, noInput, 400, 'invalid_request', 'invalid_request_error');
  t.regex(noInput.json.error.message, /input/);

  const noContents = await post(gw, '/v1beta/models/gemini-2.5-flash:generateContent', { generationConfig: { maxOutputTokens: 5 } }, { key });
  geminiError(t, noContents, 400, 'INVALID_ARGUMENT');
  t.regex(noContents.json.error.message, /contents/);

  const badMethod = await post(gw, '/v1beta/models/gemini-2.5-flash:countTokens', { contents: contents('x') }, { key });
  geminiError(t, badMethod, 404, 'NOT_FOUND');

  // None of these reached an upstream.
  t.is(await upstreamCount(gw, 'openai-resp-a'), 0);
});

test('unknown model and callable=false placeholders: 400 model_not_found in each shape', async (t) => {
  for (const model of ['no-such-model', 'gpt-5-pro']) {
    const chat = await post(gw, '/v1/chat/completions', { model, messages: user('x') }, { key });
    openaiError(t, chat, 400, 'model_not_found', 'invalid_request_error');
    t.true(chat.json.error.message.includes(model));
    const responses = await post(gw, '/v1/responses', { model, input: 'x' }, { key });
    openaiError(t, responses, 400, 'model_not_found', 'invalid_request_error');
    const messages = await post(gw, '/v1/messages', { model, max_tokens: 5, messages: user('x') }, { key });
    messagesError(t, messages, 400, 'not_found_error');
    const gemini = await post(gw, `/v1beta/models/${model}:generateContent`, { contents: contents('x') }, { key });
    geminiError(t, gemini, 400, 'NOT_FOUND');
  }
});

test('allowed_models excludes the model: 400 model_not_allowed in all three shapes; aliases of an allowed model pass', async (t) => {
  const limited = (await gw.newKey(accountId, { allowed_models: ['gpt-5.1'] })).key;
  const chat = await post(gw, '/v1/chat/completions', { model: 'claude-sonnet-4-5', messages: user('x'), max_tokens: 3 }, { key: limited });
  openaiError(t, chat, 400, 'model_not_allowed', 'invalid_request_error');
  const responses = await post(gw, '/v1/responses', { model: 'gpt-5-mini', input: 'x' }, { key: limited });
  openaiError(t, responses, 400, 'model_not_allowed', 'invalid_request_error');
  const messages = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 3, messages: user('x') }, { key: limited });
  messagesError(t, messages, 400, 'invalid_request_error');
  t.regex(messages.json.error.message, /not allowed/);
  const gemini = await post(gw, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: contents('x') }, { key: limited });
  geminiError(t, gemini, 400, 'INVALID_ARGUMENT');

  const allowed = await post(gw, '/v1/chat/completions', { model: 'gpt-5', messages: user('x'), max_tokens: 3 }, { key: limited });
  t.is(allowed.status, 200, allowed.text);
  // An older alias resolves to the current model, which is what the upstream is asked for.
  t.is(allowed.json.model, 'gpt-5.1');

  const none = (await gw.newKey(accountId, { allowed_models: [] })).key;
  const empty = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('x'), max_tokens: 3 }, { key: none });
  openaiError(t, empty, 400, 'model_not_allowed', 'invalid_request_error');
  // Every request: also for a model the catalogue does not have.
  const unknown = await post(gw, '/v1/chat/completions', { model: 'no-such-model', messages: user('x'), max_tokens: 3 }, { key: none });
  openaiError(t, unknown, 400, 'model_not_allowed', 'invalid_request_error');
});

test('image-only and video-only models on chat endpoints: 503 no_channel_available', async (t) => {
  for (const model of ['gpt-image-1', 'dall-e-3', 'seedance-1-0-pro', 'midjourney-v7']) {
    const chat = await post(gw, '/v1/chat/completions', { model, messages: user('x') }, { key });
    openaiError(t, chat, 503, 'no_channel_available', 'server_error');
  }
  const messages = await post(gw, '/v1/messages', { model: 'seedance-1-0-lite', max_tokens: 5, messages: user('x') }, { key });
  messagesError(t, messages, 503, 'overloaded_error');
  const responses = await post(gw, '/v1/responses', { model: 'nano-banana', input: 'x' }, { key });
  openaiError(t, responses, 503, 'no_channel_available', 'server_error');
  const gemini = await post(gw, '/v1beta/models/nano-banana:generateContent', { contents: contents('x') }, { key });
  geminiError(t, gemini, 503, 'UNAVAILABLE');
});

test.serial('a model with no channel for the protocol: 503 in that endpoint shape, no upstream call', async (t) => {
  const before = (await gw.control('GET', '/requests')).count;
  const messages = await post(gw, '/v1/messages', { model: 'gpt-5.1', max_tokens: 5, messages: user('x') }, { key });
  messagesError(t, messages, 503, 'overloaded_error');
  t.regex(messages.json.error.message, /gpt-5\.1/);
  const responses = await post(gw, '/v1/responses', { model: 'claude-haiku-4-5', input: 'x' }, { key });
  openaiError(t, responses, 503, 'no_channel_available', 'server_error');
  const gemini = await post(gw, '/v1beta/models/claude-sonnet-4-5:generateContent', { contents: contents('x') }, { key });
  geminiError(t, gemini, 503, 'UNAVAILABLE');
  const geminiStream = await post(gw, '/v1beta/models/grok-4:streamGenerateContent?alt=sse', { contents: contents('x') }, { key });
  geminiError(t, geminiStream, 503, 'UNAVAILABLE');
  const grokResponses = await post(gw, '/v1/responses', { model: 'grok-4', input: 'x' }, { key });
  openaiError(t, grokResponses, 503, 'no_channel_available', 'server_error');
  t.is((await gw.control('GET', '/requests')).count, before);
});

// ---------------------------------------------------------------- SSE framing

test('chat-completions SSE: only data: lines, chunk objects, ends with data: [DONE]', async (t) => {
  const r = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('Stream four words'), stream: true, max_tokens: 4 }, { key });
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /^text\/event-stream/);
  t.true(r.text.endsWith('data: [DONE]\n\n'));
  for (const line of r.text.split('\n')) if (line !== '') t.true(line.startsWith('data: '), line);
  const events = sseEvents(r.text);
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
  t.true(chunks.every((c) => c.object === 'chat.completion.chunk'));
  t.is(chunks.filter((c) => c.choices[0]?.finish_reason).length, 1);
  // No include_usage: the client gets no usage chunk (the gateway asked the upstream for it, for billing).
  t.false(chunks.some((c) => c.usage));
  t.is(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('').trim().split(/\s+/).length, 4);

  const withUsage = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('x'), stream: true, max_tokens: 4, stream_options: { include_usage: true } }, { key });
  const last = JSON.parse(sseEvents(withUsage.text).at(-2)!.data);
  t.deepEqual(last.choices, []);
  t.is(last.usage.completion_tokens, 4);

  // stream_options without stream is the client's mistake: a 400 naming it (before any upstream call).
  const lone = await post(gw, '/v1/chat/completions', { model: 'gpt-5.1', messages: user('x'), max_tokens: 4, stream_options: { include_usage: true } }, { key });
  t.is(lone.status, 400);
  t.like(lone.json.error, { code: 'invalid_request', param: 'stream_options', type: 'invalid_request_error' });
});

test('messages SSE: event: + data: pairs, message_start first and message_stop last', async (t) => {
  const r = await post(gw, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 4, messages: user('hello'), stream: true }, { key });
  t.is(r.status, 200);
  const events = sseEvents(r.text);
  t.true(events.every((e) => e.event !== undefined && JSON.parse(e.data).type === e.event));
  t.is(events[0].event, 'message_start');
  t.is(events.at(-1)!.event, 'message_stop');
  t.true(events.some((e) => e.event === 'content_block_delta'));
  t.is(JSON.parse(events.find((e) => e.event === 'message_delta')!.data).usage.output_tokens, 4);
});

test('messages SSE through translation to a chat-completions client keeps chat framing', async (t) => {
  const r = await post(gw, '/v1/chat/completions', { model: 'claude-sonnet-4-5', messages: user('hello'), stream: true, max_tokens: 4, stream_options: { include_usage: true } }, { key });
  const events = sseEvents(r.text);
  t.true(events.every((e) => e.event === undefined));
  t.is(events.at(-1)!.data, '[DONE]');
  const usage = events.slice(0, -1).map((e) => JSON.parse(e.data)).find((c) => c.usage)?.usage;
  t.is(usage?.completion_tokens, 4);
});

test('responses SSE: response.* events with strictly increasing sequence_number', async (t) => {
  const r = await post(gw, '/v1/responses', { model: 'gpt-5.1', input: [{ role: 'user', content: 'hello' }], instructions: 'be nice', stream: true, max_output_tokens: 500 }, { key });
  t.is(r.status, 200);
  const events = sseEvents(r.text);
  const seq = events.map((e) => JSON.parse(e.data).sequence_number as number);
  for (let i = 1; i < seq.length; i++) t.true(seq[i] > seq[i - 1], `sequence_number ${seq[i - 1]} then ${seq[i]}`);
  t.true(events.every((e) => e.event?.startsWith('response.') && JSON.parse(e.data).type === e.event));
  t.is(events[0].event, 'response.created');
  t.is(JSON.parse(events[0].data).response.usage, null);
  t.is(events[1].event, 'response.in_progress');
  const done = JSON.parse(events.at(-1)!.data);
  t.is(done.type, 'response.completed');
  t.true(done.response.usage.output_tokens > 0);
  const order = events.map((e) => e.event);
  t.true(order.indexOf('response.output_item.added') < order.indexOf('response.output_text.delta'));
  t.true(order.lastIndexOf('response.output_text.delta') < order.indexOf('response.output_text.done'));
  t.true(order.indexOf('response.output_text.done') < order.lastIndexOf('response.output_item.done'));
});

test('generate-content: an alt other than sse or json is 400 in the Gemini shape; a max_tokens priced past any balance is 402, not 500', async (t) => {
  const bad = await post(gw, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=xml', { contents: contents('hello') }, { key });
  geminiError(t, bad, 400, 'INVALID_ARGUMENT');
  const json = await post(gw, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=json', { contents: contents('hello'), generationConfig: { maxOutputTokens: 3 } }, { key });
  t.is(json.status, 200, json.text);
  t.true(Array.isArray(JSON.parse(json.text)));
  const huge = await post(gw, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: contents('hello'), generationConfig: { maxOutputTokens: Number.MAX_SAFE_INTEGER } }, { key });
  geminiError(t, huge, 402, 'RESOURCE_EXHAUSTED');
});

test('generate-content streams: alt=sse gives data: lines; without alt=sse a JSON array', async (t) => {
  const sse = await post(gw, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', { contents: contents('hello'), generationConfig: { maxOutputTokens: 3 } }, { key });
  t.is(sse.status, 200);
  t.regex(sse.headers.get('content-type') ?? '', /^text\/event-stream/);
  for (const line of sse.text.split(/\r?\n/)) if (line !== '') t.true(line.startsWith('data: '), line);
  const chunks = sseEvents(sse.text).map((e) => JSON.parse(e.data));
  t.is(chunks.length, 3);
  t.is(chunks.at(-1).candidates[0].finishReason, 'MAX_TOKENS');
  t.is(chunks.at(-1).usageMetadata.candidatesTokenCount, 3);

  const array = await post(gw, '/v1beta/models/gemini-2.5-flash:streamGenerateContent', { contents: contents('hello'), generationConfig: { maxOutputTokens: 3 } }, { key });
  t.is(array.status, 200);
  t.regex(array.headers.get('content-type') ?? '', /^application\/json/);
  const items = JSON.parse(array.text);
  t.true(Array.isArray(items));
  t.is(items.length, 3);
  t.deepEqual(items.map((c: any) => c.candidates[0].content.parts[0].text), chunks.map((c) => c.candidates[0].content.parts[0].text));

  // x-goog-api-key and ?key= authenticate here, as the Google clients send them.
  const goog = await post(gw, '/v1beta/models/gemini-2.5-flash:generateContent', { contents: contents('hello') }, { headers: { 'x-goog-api-key': key } });
  t.is(goog.status, 200);
  t.truthy(goog.json.candidates[0].content.parts[0].text);
  const query = await post(gw, `/v1beta/models/gemini-2.5-flash:generateContent?key=${key}`, { contents: contents('hello') });
  t.is(query.status, 200);
});

test.serial('an older alias reaches the upstream as the current model id, natively and through translation', async (t) => {
  const lastModel = async (channel: string) => {
    const log = await gw.control('GET', `/requests?channel=${channel}`);
    const last = log.requests.at(-1);
    return { body: last?.body?.model, path: last?.path as string | undefined };
  };
  const native = await post(gw, '/v1/chat/completions', { model: 'gpt-4o', messages: user('x'), max_tokens: 3 }, { key });
  t.is(native.status, 200);
  t.is((await lastModel('openai-a')).body, 'gpt-4.1');
  const translated = await post(gw, '/v1/chat/completions', { model: 'claude-3-5-sonnet-latest', messages: user('x'), max_tokens: 3 }, { key });
  t.is(translated.status, 200, translated.text);
  t.is((await lastModel('anthropic-a')).body, 'claude-sonnet-4-5');
  t.is(translated.json.model, 'claude-sonnet-4-5');
  const messages = await post(gw, '/v1/messages', { model: 'claude-3-5-haiku-latest', max_tokens: 3, messages: user('x') }, { key });
  t.is(messages.status, 200);
  t.is((await lastModel('anthropic-a')).body, 'claude-haiku-4-5');
  const gemini = await post(gw, '/v1beta/models/gemini-2.0-flash:generateContent', { contents: contents('x') }, { key });
  t.is(gemini.status, 200);
  t.is((await lastModel('gemini-a')).path, '/v1beta/models/gemini-2.5-flash:generateContent');
  const geminiChat = await post(gw, '/v1/chat/completions', { model: 'gemini-2.0-flash', messages: user('x'), max_tokens: 3 }, { key });
  t.is(geminiChat.status, 200);
  t.is((await lastModel('gemini-a')).path, '/v1beta/models/gemini-2.5-flash:generateContent');
});
