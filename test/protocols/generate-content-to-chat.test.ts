import test from 'ava';
import { parseRequest } from '../../protocols/parse-request';
import { GEMINI_FIELD_NAMES } from '../../protocols/translate/generate-content/field-names';
import { getTranslator } from '../../protocols/translate/registry';
import { dataSse, readFrames, run } from './helpers';

const tr = getTranslator('generate-content', 'chat-completions')!;

test('name is the X-Protocol-Translation value', (t) => {
  t.is(tr.name, 'generate-content_to_chat-completions');
});

test('request: model and streaming from the path; contents, function calling, generationConfig', (t) => {
  const body = parseRequest('generate-content', {
    system_instruction: { parts: [{ text: 'You are a cat. Your name is Neko.' }] },
    contents: [
      {
        role: 'user',
        parts: [
          { text: 'What is in this picture? Then find me a restaurant.' },
          { inline_data: { mime_type: 'image/jpeg', data: '/9j/4AAQ' } },
        ],
      },
      { role: 'model', parts: [{ text: 'A cat.' }, { functionCall: { name: 'find_restaurant', args: { cuisine: 'sushi' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'find_restaurant', response: { name: 'Sushi Zen', rating: 4.6 } } }] },
    ],
    tools: [
      {
        functionDeclarations: [
          {
            name: 'find_restaurant',
            description: 'Find a restaurant',
            parameters: { type: 'OBJECT', properties: { cuisine: { type: 'STRING', nullable: true } }, required: ['cuisine'] },
          },
        ],
      },
      { googleSearch: {} },
    ],
    toolConfig: { functionCallingConfig: { mode: 'ANY' } },
    generationConfig: {
      maxOutputTokens: 800,
      temperature: 1.0,
      topP: 0.8,
      stopSequences: ['Title'],
      candidateCount: 1,
      responseMimeType: 'application/json',
    },
  });
  const { body: out, dropped } = tr.request(body, { model: 'gpt-4.1', stream: true }) as any;
  t.deepEqual(dropped, []);
  t.is(out.model, 'gpt-4.1');
  t.true(out.stream);
  t.deepEqual(out.stream_options, { include_usage: true });
  t.deepEqual(out.messages[0], { role: 'system', content: 'You are a cat. Your name is Neko.' });
  t.deepEqual(out.messages[1], {
    role: 'user',
    content: [
      { type: 'text', text: 'What is in this picture? Then find me a restaurant.' },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
    ],
  });
  const call = out.messages[2].tool_calls[0];
  t.is(out.messages[2].content, 'A cat.');
  t.deepEqual(call.function, { name: 'find_restaurant', arguments: '{"cuisine":"sushi"}' });
  t.regex(call.id, /^call_/);
  t.deepEqual(out.messages[3], { role: 'tool', tool_call_id: call.id, content: '{"name":"Sushi Zen","rating":4.6}' });
  t.deepEqual(out.tools, [
    {
      type: 'function',
      function: {
        name: 'find_restaurant',
        description: 'Find a restaurant',
        parameters: { type: 'object', properties: { cuisine: { type: ['string', 'null'] } }, required: ['cuisine'] },
      },
    },
    { type: 'web_search' },
  ]);
  t.is(out.tool_choice, 'required');
  t.is(out.max_tokens, 800);
  t.is(out.temperature, 1);
  t.is(out.top_p, 0.8);
  t.deepEqual(out.stop, ['Title']);
  t.deepEqual(out.response_format, { type: 'json_object' });
  t.false('n' in out);
});

test('request: a streamed call asks for one choice, since the stream relays the first only (candidateCount reported)', (t) => {
  const body = parseRequest('generate-content', { contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { candidateCount: 2 } });
  const streamed = tr.request(body, { model: 'gpt-4.1', stream: true }) as any;
  t.deepEqual(streamed.dropped, [GEMINI_FIELD_NAMES.n]);
  t.false('n' in streamed.body);
  const whole = tr.request(body, { model: 'gpt-4.1', stream: false }) as any;
  t.deepEqual(whole.dropped, []);
  t.is(whole.body.n, 2);
});

test('request: a file given by URL cannot be carried on chat and is reported', (t) => {
  const { dropped } = tr.request(
    parseRequest('generate-content', {
      contents: [{ parts: [{ fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/menu.pdf' } }, { text: 'read it' }] }],
    }),
    { model: 'gpt-4.1' },
  );
  t.deepEqual(dropped, ['contents.parts.fileData']);
});

test('request: function responses pair with calls by name, in order; ids are kept when given', (t) => {
  const { body } = tr.request(
    parseRequest('generate-content', {
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Oslo and Rome?' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'weather', args: { city: 'Oslo' } } },
            { functionCall: { name: 'weather', args: { city: 'Rome' } } },
            { functionCall: { id: 'fc-7', name: 'time', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'weather', response: { output: '2C' } } },
            { functionResponse: { name: 'weather', response: { output: '21C' } } },
            { functionResponse: { id: 'fc-7', name: 'time', response: { output: 'noon' } } },
          ],
        },
      ],
    }),
    { model: 'gpt-4.1' },
  ) as any;
  const calls = body.messages[1].tool_calls;
  t.is(calls[2].id, 'fc-7');
  t.deepEqual(
    body.messages.slice(2).map((m: any) => [m.tool_call_id, m.content]),
    [
      [calls[0].id, '2C'],
      [calls[1].id, '21C'],
      ['fc-7', 'noon'],
    ],
  );
});

test('request: toolConfig modes and dropped Gemini-only fields', (t) => {
  const mk = (functionCallingConfig: unknown) =>
    tr.request(
      parseRequest('generate-content', {
        contents: [{ parts: [{ text: 'x' }] }],
        tools: [{ functionDeclarations: [{ name: 'f' }] }],
        toolConfig: { functionCallingConfig },
      }),
      { model: 'm' },
    ).body.tool_choice;
  t.is(mk({ mode: 'AUTO' }), 'auto');
  t.is(mk({ mode: 'NONE' }), 'none');
  t.deepEqual(mk({ mode: 'ANY', allowedFunctionNames: ['f'] }), { type: 'function', function: { name: 'f' } });
  const { dropped } = tr.request(
    parseRequest('generate-content', {
      contents: [{ parts: [{ text: 'x' }] }],
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
      generationConfig: { topK: 40, thinkingConfig: { thinkingBudget: 1024 } },
      tools: [{ codeExecution: {} }],
    }),
    { model: 'm' },
  );
  t.deepEqual(dropped.sort(), ['generationConfig.thinkingConfig', 'generationConfig.topK', 'safetySettings', 'tools.codeExecution']);
});

test('response: chat.completion to GenerateContentResponse', (t) => {
  const out = tr.response({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4.1',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"cats"}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 100, completion_tokens: 30, total_tokens: 130, prompt_tokens_details: { cached_tokens: 64 }, completion_tokens_details: { reasoning_tokens: 10 } },
  });
  t.deepEqual(out, {
    candidates: [
      {
        content: { role: 'model', parts: [{ text: 'Let me look.' }, { functionCall: { name: 'lookup', args: { q: 'cats' } } }] },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 130, cachedContentTokenCount: 64, thoughtsTokenCount: 10 },
    modelVersion: 'gpt-4.1',
    responseId: 'chatcmpl-1',
  });
  const cut = tr.response({ id: 'x', model: 'm', choices: [{ index: 0, message: { content: 'abc' }, finish_reason: 'length' }] }) as any;
  t.is(cut.candidates[0].finishReason, 'MAX_TOKENS');
});

test('stream: chat chunks become alt=sse GenerateContentResponse frames', (t) => {
  const sse = dataSse([
    { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { content: 'Two' }, finish_reason: null }] },
    { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { content: ' cats.' }, finish_reason: null }] },
    { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } },
    '[DONE]',
  ]);
  const { frames, done } = run(tr.stream(), sse, 3);
  t.true(done);
  t.true(frames.every((f) => f.startsWith('data: {') && f.endsWith('\n\n')));
  t.deepEqual(
    readFrames(frames).map((f) => f.json),
    [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Two' }] }, index: 0 }], modelVersion: 'gpt-4.1', responseId: 'chatcmpl-9' },
      { candidates: [{ content: { role: 'model', parts: [{ text: ' cats.' }] }, index: 0 }], modelVersion: 'gpt-4.1', responseId: 'chatcmpl-9' },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, index: 0, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 3, totalTokenCount: 15 },
        modelVersion: 'gpt-4.1',
        responseId: 'chatcmpl-9',
      },
    ],
  );
});

test('stream: tool-call fragments are sent as one functionCall part in the final chunk', (t) => {
  const sse = dataSse([
    { id: 'c', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } }] } }] },
    { id: 'c', model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"q"' } }] } }] },
    { id: 'c', model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':"cats"}' } }] } }] },
    { id: 'c', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    '[DONE]',
  ]);
  const frames = readFrames(run(tr.stream(), sse).frames).map((f) => f.json);
  t.is(frames.length, 1);
  t.deepEqual(frames[0].candidates[0], {
    content: { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'cats' } } }] },
    index: 0,
    finishReason: 'STOP',
  });
});
