import test from 'ava';
import { parseRequest } from '../../protocols/parse-request';
import { getTranslator } from '../../protocols/translate/registry';
import { dataSse, readFrames, run } from './helpers';

const tr = getTranslator('chat-completions', 'generate-content')!;

test('name is the X-Protocol-Translation value', (t) => {
  t.is(tr.name, 'chat-completions_to_generate-content');
});

test('request: contents with user/model roles, systemInstruction, function calls and responses', (t) => {
  const { body, dropped } = tr.request(
    parseRequest('chat-completions', {
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture and what is the weather there?' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQSkZJRg==' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_9', content: '{"temperature":18,"unit":"C"}' },
        { role: 'assistant', content: 'It is 18°C in Paris.' },
        { role: 'user', content: 'And tomorrow?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get weather for a city',
            parameters: {
              type: 'object',
              properties: {
                city: { type: 'string', description: 'City name' },
                unit: { type: ['string', 'null'], enum: ['C', 'F'] },
                days: { type: 'integer', minimum: 1 },
              },
              required: ['city'],
              additionalProperties: false,
            },
            strict: true,
          },
        },
        { type: 'web_search' },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_completion_tokens: 1000,
      temperature: 0.4,
      top_p: 0.95,
      stop: ['###'],
      n: 2,
      seed: 11,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'weather', schema: { type: 'object', properties: { answer: { type: 'string' } } } },
      },
    }),
  );
  t.deepEqual(dropped, []);
  t.deepEqual(body, {
    contents: [
      {
        role: 'user',
        parts: [
          { text: 'What is in this picture and what is the weather there?' },
          { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } },
          { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png' } },
        ],
      },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 18, unit: 'C' } } }] },
      { role: 'model', parts: [{ text: 'It is 18°C in Paris.' }] },
      { role: 'user', parts: [{ text: 'And tomorrow?' }] },
    ],
    systemInstruction: { parts: [{ text: 'You are a helpful assistant.' }] },
    tools: [
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Get weather for a city',
            parameters: {
              type: 'OBJECT',
              properties: {
                city: { type: 'STRING', description: 'City name' },
                unit: { type: 'STRING', nullable: true, enum: ['C', 'F'] },
                days: { type: 'INTEGER', minimum: 1 },
              },
              required: ['city'],
            },
          },
        ],
      },
      { googleSearch: {} },
    ],
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    generationConfig: {
      maxOutputTokens: 1000,
      temperature: 0.4,
      topP: 0.95,
      stopSequences: ['###'],
      candidateCount: 2,
      seed: 11,
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
      responseMimeType: 'application/json',
      responseSchema: { type: 'OBJECT', properties: { answer: { type: 'STRING' } } },
    },
  });
  t.false('model' in body);
  t.false('stream' in body);
});

test('request: a streamed call asks for one candidate, since the stream relays the first only (n named in X-Protocol-Warning)', (t) => {
  const req = { model: 'g', messages: [{ role: 'user', content: 'x' }], n: 2 };
  const streamed = tr.request(parseRequest('chat-completions', { ...req, stream: true }));
  t.deepEqual(streamed.dropped, ['n']);
  t.false('candidateCount' in ((streamed.body as any).generationConfig ?? {}));
  const whole = tr.request(parseRequest('chat-completions', req));
  t.deepEqual(whole.dropped, []);
  t.is((whole.body as any).generationConfig.candidateCount, 2);
  // n: 1 loses nothing: no warning.
  t.deepEqual(tr.request(parseRequest('chat-completions', { ...req, n: 1, stream: true })).dropped, []);
});

test('request: tool_choice modes; plain-text tool results go under output; json_object', (t) => {
  const base = {
    model: 'g',
    messages: [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'no results' },
    ],
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
  };
  const mode = (tool_choice: unknown) =>
    (tr.request(parseRequest('chat-completions', { ...base, tool_choice })).body as any).toolConfig.functionCallingConfig;
  t.deepEqual(mode('auto'), { mode: 'AUTO' });
  t.deepEqual(mode('none'), { mode: 'NONE' });
  t.deepEqual(mode('required'), { mode: 'ANY' });
  const { body } = tr.request(parseRequest('chat-completions', { ...base, response_format: { type: 'json_object' } })) as any;
  t.deepEqual(body.contents[1], { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'no results' } } }] });
  t.deepEqual(body.generationConfig, { responseMimeType: 'application/json' });
  t.false('toolConfig' in body);
});

test('request: dropped fields', (t) => {
  const { dropped } = tr.request(
    parseRequest('chat-completions', {
      model: 'g',
      messages: [{ role: 'user', content: 'Draw a cat' }],
      tools: [{ type: 'image_generation' }],
      logprobs: true,
      top_logprobs: 2,
      parallel_tool_calls: false,
      user: 'u1',
      reasoning_effort: 'low',
    }),
  );
  t.deepEqual(dropped.sort(), ['logprobs', 'parallel_tool_calls', 'reasoning_effort', 'tools.image_generation', 'top_logprobs', 'user']);
});

test('request: $ref and anyOf in a JSON schema are turned into the Gemini subset', (t) => {
  const { body } = tr.request(
    parseRequest('chat-completions', {
      model: 'g',
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'book',
            parameters: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              properties: {
                guest: { $ref: '#/$defs/person' },
                note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
                level: { const: 'vip' },
              },
              $defs: { person: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
            },
          },
        },
      ],
    }),
  ) as any;
  t.deepEqual(body.tools[0].functionDeclarations[0].parameters, {
    type: 'OBJECT',
    properties: {
      guest: { type: 'OBJECT', properties: { name: { type: 'STRING' } }, required: ['name'] },
      note: { nullable: true, type: 'STRING' },
      level: { type: 'STRING', enum: ['vip'] },
    },
  });
});

// ---- response ---------------------------------------------------------------

test('response: candidates to choices with usage and cached tokens', (t) => {
  const out = tr.response(
    {
      candidates: [
        { content: { parts: [{ text: 'The image shows ' }, { text: 'a cat.' }], role: 'model' }, finishReason: 'STOP', index: 0 },
        { content: { parts: [{ text: 'A kitten, cut' }], role: 'model' }, finishReason: 'MAX_TOKENS', index: 1 },
      ],
      usageMetadata: {
        promptTokenCount: 1200,
        candidatesTokenCount: 40,
        totalTokenCount: 1290,
        cachedContentTokenCount: 1024,
        thoughtsTokenCount: 50,
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'mAitaLmkHPPlz7IPvtfUqQ4',
    },
    { created: 1_750_000_000 },
  );
  t.deepEqual(out, {
    id: 'mAitaLmkHPPlz7IPvtfUqQ4',
    object: 'chat.completion',
    created: 1_750_000_000,
    model: 'gemini-2.5-flash',
    choices: [
      { index: 0, message: { role: 'assistant', content: 'The image shows a cat.', refusal: null }, logprobs: null, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: 'A kitten, cut', refusal: null }, logprobs: null, finish_reason: 'length' },
    ],
    usage: {
      prompt_tokens: 1200,
      completion_tokens: 90,
      total_tokens: 1290,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 50 },
    },
  });
});

test('response: functionCall parts become tool_calls and finish_reason tool_calls; thoughts are not content', (t) => {
  const out = tr.response({
    candidates: [
      {
        content: {
          role: 'model',
          parts: [
            { text: 'Considering the request...', thought: true },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
            { functionCall: { name: 'get_time', args: {} } },
          ],
        },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'gemini-2.5-pro',
  }) as any;
  const choice = out.choices[0];
  t.is(choice.finish_reason, 'tool_calls');
  t.is(choice.message.content, null);
  t.is(choice.message.tool_calls.length, 2);
  t.regex(choice.message.tool_calls[0].id, /^call_/);
  t.deepEqual(choice.message.tool_calls[0].function, { name: 'get_weather', arguments: '{"city":"Paris"}' });
  t.deepEqual(choice.message.tool_calls[1].function, { name: 'get_time', arguments: '{}' });
  t.not(choice.message.tool_calls[0].id, choice.message.tool_calls[1].id);
});

test('response: safety stop and a blocked prompt become content_filter', (t) => {
  const a = tr.response({ candidates: [{ content: { parts: [] }, finishReason: 'SAFETY', index: 0 }], usageMetadata: {} }) as any;
  t.is(a.choices[0].finish_reason, 'content_filter');
  const b = tr.response({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 } }) as any;
  t.is(b.choices.length, 1);
  t.is(b.choices[0].finish_reason, 'content_filter');
  t.is(b.usage.prompt_tokens, 8);
});

// ---- stream -------------------------------------------------------------------

const geminiStream = dataSse(
  [
    {
      candidates: [{ content: { parts: [{ text: 'The quick' }], role: 'model' }, index: 0 }],
      usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'resp-abc',
    },
    {
      candidates: [{ content: { parts: [{ text: ' brown fox' }], role: 'model' }, index: 0 }],
      usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3, totalTokenCount: 12 },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'resp-abc',
    },
    {
      candidates: [{ content: { parts: [{ text: ' jumps.' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 6, totalTokenCount: 27, thoughtsTokenCount: 12, cachedContentTokenCount: 4 },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'resp-abc',
    },
  ],
  '\r\n\r\n',
);

test('stream: each chunk becomes chat chunks; final usage chunk; [DONE]', (t) => {
  const { frames, done } = run(tr.stream({ includeUsage: true, created: 1 }), geminiStream, 5);
  t.true(done);
  const chunks = readFrames(frames).map((f) => f.json);
  const base = { id: 'resp-abc', object: 'chat.completion.chunk', created: 1, model: 'gemini-2.5-flash' };
  t.deepEqual(chunks, [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: { content: 'The quick' }, logprobs: null, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: { content: ' brown fox' }, logprobs: null, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: { content: ' jumps.' }, logprobs: null, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usage: null },
    {
      ...base,
      choices: [],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 18,
        total_tokens: 27,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 12 },
      },
    },
    '[DONE]',
  ]);
});

test('stream: a functionCall chunk becomes one complete tool call delta', (t) => {
  const sse = dataSse([
    {
      candidates: [
        { content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] }, finishReason: 'STOP', index: 0 },
      ],
      usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 7, totalTokenCount: 37 },
      modelVersion: 'gemini-2.5-flash',
    },
  ]);
  const chunks = readFrames(run(tr.stream(), sse).frames).map((f) => f.json);
  t.is(chunks.length, 5);
  const call = (chunks[1] as any).choices[0].delta.tool_calls[0];
  t.is(call.index, 0);
  t.is(call.type, 'function');
  t.is(call.function.name, 'get_weather');
  t.deepEqual((chunks[2] as any).choices[0].delta, { tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] });
  t.is((chunks[3] as any).choices[0].finish_reason, 'tool_calls');
  t.is(chunks[4], '[DONE]');
});

test('stream: an in-stream error object is handed to the caller', (t) => {
  const sse = dataSse([
    { candidates: [{ content: { parts: [{ text: 'Hi' }], role: 'model' }, index: 0 }], modelVersion: 'g' },
    { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } },
  ]);
  const { errors, done, frames } = run(tr.stream(), sse);
  t.false(done);
  t.deepEqual(errors, [{ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }]);
  t.is(readFrames(frames).length, 2);
});
