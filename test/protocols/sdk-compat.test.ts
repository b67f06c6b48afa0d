/**
 * The translated wire output read back by the vendors' own SDKs (through a
 * fake fetch), and the requests those SDKs send checked by our schemas: a
 * shared misunderstanding between our encoder and our tests cannot pass here.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import test from 'ava';
import OpenAI from 'openai';
import { parseRequest } from '../../protocols/parse-request';
import { getTranslator } from '../../protocols/translate/registry';
import { dataSse, messagesSse, run } from './helpers';

type Captured = { url: string; body: unknown };

function fakeFetch(payload: string, contentType: string, captured: Captured[] = []) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    captured.push({ url, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    return new Response(payload, { status: 200, headers: { 'content-type': contentType } });
  };
}

const anthropicToolStream = messagesSse([
  { type: 'message_start', message: { id: 'msg_01', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5', stop_reason: null, stop_sequence: null, usage: { input_tokens: 300, output_tokens: 1, cache_read_input_tokens: 200, cache_creation_input_tokens: 0 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking the weather.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: {} } },
  { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 40 } },
  { type: 'message_stop' },
]);

test('OpenAI SDK reads a chat stream translated from a messages upstream', async (t) => {
  const frames = run(getTranslator('chat-completions', 'messages')!.stream({ includeUsage: true }), anthropicToolStream).frames;
  const captured: Captured[] = [];
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: fakeFetch(frames.join(''), 'text/event-stream', captured) });
  const stream = client.chat.completions.stream({
    model: 'claude-sonnet-4-5',
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    stream_options: { include_usage: true },
  });
  const final = await stream.finalChatCompletion();
  t.is(final.choices[0].finish_reason, 'tool_calls');
  t.is(final.choices[0].message.content, 'Checking the weather.');
  const call = final.choices[0].message.tool_calls![0];
  t.is(call.id, 'toolu_01');
  t.true(call.type === 'function' && call.function.name === 'get_weather' && call.function.arguments === '{"city":"Paris"}');
  t.deepEqual(final.usage && [final.usage.prompt_tokens, final.usage.completion_tokens, final.usage.prompt_tokens_details?.cached_tokens], [500, 40, 200]);
  // and the request the SDK sent is valid for our schema and translates cleanly
  const body = parseRequest('chat-completions', captured[0].body);
  t.deepEqual(getTranslator('chat-completions', 'messages')!.request(body).dropped, []);
});

test('OpenAI SDK reads a chat.completion translated from a generate-content upstream', async (t) => {
  const out = getTranslator('chat-completions', 'generate-content')!.response({
    candidates: [{ content: { role: 'model', parts: [{ text: 'Hello from Gemini.' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'r-1',
  });
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: fakeFetch(JSON.stringify(out), 'application/json') });
  const completion = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] });
  t.is(completion.choices[0].message.content, 'Hello from Gemini.');
  t.is(completion.usage?.total_tokens, 9);
});

test('Anthropic SDK reads a messages stream translated from a chat upstream', async (t) => {
  const chat = dataSse([
    { id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    { id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { content: 'Sure, ' }, finish_reason: null }] },
    { id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { content: 'looking.' }, finish_reason: null }] },
    { id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_Z', type: 'function', function: { name: 'search', arguments: '{"q":"' } }] }, finish_reason: null }] },
    { id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'otters"}' } }] }, finish_reason: null }] },
    { id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    { id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [], usage: { prompt_tokens: 70, completion_tokens: 15, total_tokens: 85, prompt_tokens_details: { cached_tokens: 64 } } },
    '[DONE]',
  ]);
  const frames = run(getTranslator('messages', 'chat-completions')!.stream(), chat).frames;
  const captured: Captured[] = [];
  const client = new Anthropic({ apiKey: 'sk-test', baseURL: 'http://gateway.test', fetch: fakeFetch(frames.join(''), 'text/event-stream', captured) });
  const final = await client.messages
    .stream({
      model: 'gpt-4.1',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Find otters' }],
      tools: [{ name: 'search', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
    })
    .finalMessage();
  t.is(final.id, 'chatcmpl-7');
  t.is(final.stop_reason, 'tool_use');
  t.deepEqual(final.content.map((b) => b.type), ['text', 'tool_use']);
  t.is(final.content[0].type === 'text' ? final.content[0].text : '', 'Sure, looking.');
  t.deepEqual(final.content[1].type === 'tool_use' ? final.content[1].input : undefined, { q: 'otters' });
  t.is(final.usage.output_tokens, 15);
  t.is(final.usage.input_tokens, 6);
  t.is(final.usage.cache_read_input_tokens, 64);
  const body = parseRequest('messages', captured[0].body);
  t.is(body.max_tokens, 256);
});

test('Google GenAI SDK reads a stream translated from a messages upstream', async (t) => {
  const frames = run(getTranslator('generate-content', 'messages')!.stream(), anthropicToolStream).frames;
  const captured: Captured[] = [];
  const ai = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: 'http://gateway.test', fetch: fakeFetch(frames.join(''), 'text/event-stream', captured) } });
  const stream = await ai.models.generateContentStream({
    model: 'claude-sonnet-4-5',
    contents: 'Weather in Paris?',
    config: {
      systemInstruction: 'Be brief.',
      maxOutputTokens: 200,
      tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }],
    },
  });
  let text = '';
  const calls: unknown[] = [];
  let last: any;
  for await (const chunk of stream) {
    for (const p of chunk.candidates?.[0]?.content?.parts ?? []) text += p.text ?? '';
    calls.push(...(chunk.functionCalls ?? []).map((c) => ({ name: c.name, args: c.args })));
    last = chunk;
  }
  t.is(text, 'Checking the weather.');
  t.deepEqual(calls, [{ name: 'get_weather', args: { city: 'Paris' } }]);
  t.is(last.candidates[0].finishReason, 'STOP');
  t.deepEqual(
    [last.usageMetadata.promptTokenCount, last.usageMetadata.candidatesTokenCount, last.usageMetadata.cachedContentTokenCount],
    [500, 40, 200],
  );
  // the SDK's request: model and streaming in the path, body valid for our schema
  t.regex(captured[0].url, /models\/claude-sonnet-4-5:streamGenerateContent\?alt=sse/);
  const body = parseRequest('generate-content', captured[0].body);
  t.is(body.generationConfig?.maxOutputTokens, 200);
  const translated = getTranslator('generate-content', 'messages')!.request(body, { model: 'claude-sonnet-4-5', stream: true });
  t.deepEqual(translated.body.system, 'Be brief.');
  t.deepEqual(translated.body.tools, [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }]);
});
