import test from 'ava';
import { parseRequest } from '../../protocols/parse-request';
import { getTranslator } from '../../protocols/translate/registry';
import { messagesSse, readFrames, run } from './helpers';

const tr = getTranslator('generate-content', 'messages')!;

test('name is the X-Protocol-Translation value', (t) => {
  t.is(tr.name, 'generate-content_to_messages');
});

test('request: contents to messages with tool_use/tool_result pairing, system, tools and config', (t) => {
  const { body, dropped } = tr.request(
    parseRequest('generate-content', {
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Use metric units.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Where is this and what is the weather?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0x' } },
          ],
        },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Lisbon' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { error: 'service down' } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generationConfig: { temperature: 1.5, topK: 20, stopSequences: ['END'] },
    }),
    { model: 'claude-sonnet-4-5', stream: true, defaultMaxTokens: 2048 },
  ) as any;
  t.deepEqual(dropped, []);
  const id = body.messages[1].content[0].id;
  t.regex(id, /^call_/);
  t.deepEqual(body, {
    model: 'claude-sonnet-4-5',
    max_tokens: 2048,
    system: [
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Use metric units.' },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Where is this and what is the weather?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id, name: 'get_weather', input: { city: 'Lisbon' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'service down', is_error: true }] },
    ],
    tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    tool_choice: { type: 'tool', name: 'get_weather' },
    stop_sequences: ['END'],
    temperature: 1,
    top_k: 20,
    stream: true,
  });
});

test('request: maxOutputTokens wins over the default; JSON mode and candidateCount are reported', (t) => {
  const { body, dropped } = tr.request(
    parseRequest('generate-content', {
      contents: [{ parts: [{ text: 'List three colors as JSON.' }] }],
      generationConfig: { maxOutputTokens: 64, responseMimeType: 'application/json', candidateCount: 2, seed: 3 },
    }),
    { model: 'claude' },
  );
  t.is(body.max_tokens, 64);
  t.deepEqual(dropped.sort(), ['generationConfig.candidateCount', 'generationConfig.responseMimeType', 'generationConfig.seed']);
});

test('response: message to GenerateContentResponse with cache-aware usageMetadata', (t) => {
  const out = tr.response({
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'text', text: 'Calling the tool.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Lisbon' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 30, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 },
  });
  t.deepEqual(out, {
    candidates: [
      {
        content: { role: 'model', parts: [{ text: 'Calling the tool.' }, { functionCall: { name: 'get_weather', args: { city: 'Lisbon' } } }] },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 1220, candidatesTokenCount: 30, totalTokenCount: 1250, cachedContentTokenCount: 1000 },
    modelVersion: 'claude-sonnet-4-5',
    responseId: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  });
  const cut = tr.response({ id: 'm', content: [{ type: 'text', text: 'a' }], stop_reason: 'max_tokens', usage: {} }) as any;
  t.is(cut.candidates[0].finishReason, 'MAX_TOKENS');
});

test('stream: messages events become GenerateContentResponse frames', (t) => {
  const sse = messagesSse([
    { type: 'message_start', message: { id: 'msg_7', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5', usage: { input_tokens: 40, output_tokens: 1, cache_read_input_tokens: 0 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Sunny' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' in Lisbon.' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_9', name: 'log', input: {} } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"level":' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"info"}' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 22 } },
    { type: 'message_stop' },
  ]);
  const { frames, done } = run(tr.stream(), sse, 13);
  t.true(done);
  t.deepEqual(
    readFrames(frames).map((f) => f.json),
    [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Sunny' }] }, index: 0 }], modelVersion: 'claude-sonnet-4-5', responseId: 'msg_7' },
      { candidates: [{ content: { role: 'model', parts: [{ text: ' in Lisbon.' }] }, index: 0 }], modelVersion: 'claude-sonnet-4-5', responseId: 'msg_7' },
      {
        candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'log', args: { level: 'info' } } }] }, index: 0, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 22, totalTokenCount: 62 },
        modelVersion: 'claude-sonnet-4-5',
        responseId: 'msg_7',
      },
    ],
  );
});

test('stream: an upstream error event is handed to the caller; nothing is faked', (t) => {
  const sse = messagesSse([
    { type: 'message_start', message: { id: 'msg_8', model: 'c', usage: { input_tokens: 1, output_tokens: 1 } } },
    { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  ]);
  const { frames, errors, done } = run(tr.stream(), sse);
  t.deepEqual(frames, []);
  t.false(done);
  t.is((errors[0] as any).error.type, 'overloaded_error');
});

test('request: files by URL become PDF documents; other file types are reported', (t) => {
  const { body, dropped } = tr.request(
    parseRequest('generate-content', {
      contents: [
        {
          parts: [
            { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/paper.pdf' } },
            { fileData: { mimeType: 'audio/mp3', fileUri: 'https://example.com/talk.mp3' } },
            { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/pic.webp' } },
            { text: 'Summarize these.' },
          ],
        },
      ],
    }),
    { model: 'claude' },
  ) as any;
  t.deepEqual(body.messages[0].content, [
    { type: 'document', source: { type: 'url', url: 'https://example.com/paper.pdf' } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/pic.webp' } },
    { type: 'text', text: 'Summarize these.' },
  ]);
  t.deepEqual(dropped, ['contents.parts.fileData']);
});
