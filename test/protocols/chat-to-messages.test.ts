import test from 'ava';
import { GatewayError } from '../../domain/errors';
import { parseRequest } from '../../protocols/parse-request';
import { getTranslator } from '../../protocols/translate/registry';
import { messagesSse, readFrames, run } from './helpers';

const tr = getTranslator('chat-completions', 'messages')!;

test('name is the X-Protocol-Translation value', (t) => {
  t.is(tr.name, 'chat-completions_to_messages');
});

test('request: system/developer to system, tools, tool round trip, images, stop, sampling', (t) => {
  const body = parseRequest('chat-completions', {
    model: 'claude-sonnet-4-5',
    messages: [
      { role: 'system', content: 'You are a weather bot.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in Celsius.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is the weather where this photo was taken?' },
          { type: 'image_url', image_url: { url: 'https://example.com/photo.jpg' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":18}' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '14:05' }] },
      { role: 'user', content: 'Thanks! Short answer please.' },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Get the current weather',
          parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        },
      },
      { type: 'function', function: { name: 'get_time' } },
    ],
    tool_choice: 'required',
    parallel_tool_calls: false,
    stop: 'END',
    max_tokens: 512,
    temperature: 1.4,
    top_p: 0.9,
    stream: true,
    stream_options: { include_usage: true },
    user: 'user-42',
  });
  const { body: out, dropped } = tr.request(body, { defaultMaxTokens: 4096 });
  t.deepEqual(dropped, []);
  t.deepEqual(out, {
    model: 'claude-sonnet-4-5',
    max_tokens: 512,
    system: [
      { type: 'text', text: 'You are a weather bot.' },
      { type: 'text', text: 'Answer in Celsius.' },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is the weather where this photo was taken?' },
          { type: 'image', source: { type: 'url', url: 'https://example.com/photo.jpg' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_time', input: { tz: 'Europe/Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '{"temp":18}' },
          { type: 'tool_result', tool_use_id: 'call_2', content: '14:05' },
          { type: 'text', text: 'Thanks! Short answer please.' },
        ],
      },
    ],
    tools: [
      {
        name: 'get_weather',
        description: 'Get the current weather',
        input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    stop_sequences: ['END'],
    temperature: 1,
    top_p: 0.9,
    stream: true,
    metadata: { user_id: 'user-42' },
  });
});

test('request: a single system string stays a string; max_completion_tokens wins; default cap from the caller', (t) => {
  const a = tr.request(
    parseRequest('chat-completions', {
      model: 'c',
      messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'Hi' }],
      max_tokens: 100,
      max_completion_tokens: 200,
    }),
  );
  t.is(a.body.system, 'Be kind.');
  t.is(a.body.max_tokens, 200);
  t.deepEqual(a.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  const b = tr.request(parseRequest('chat-completions', { model: 'c', messages: [{ role: 'user', content: 'Hi' }] }), { defaultMaxTokens: 8192 });
  t.is(b.body.max_tokens, 8192);
  t.false('system' in b.body);
  const c = tr.request(parseRequest('chat-completions', { model: 'c', messages: [{ role: 'user', content: 'Hi' }] }));
  t.is(c.body.max_tokens, 4096);
});

test('request: tool_choice auto / none / named function; web_search becomes the server tool', (t) => {
  const base = {
    model: 'c',
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }, { type: 'web_search' }],
  };
  const choice = (tool_choice: unknown) => tr.request(parseRequest('chat-completions', { ...base, tool_choice })).body.tool_choice;
  t.deepEqual(choice('auto'), { type: 'auto' });
  t.deepEqual(choice('none'), { type: 'none' });
  t.deepEqual(choice({ type: 'function', function: { name: 'f' } }), { type: 'tool', name: 'f' });
  t.deepEqual(tr.request(parseRequest('chat-completions', base)).body.tools, [
    { name: 'f', input_schema: { type: 'object', properties: {} } },
    { type: 'web_search_20250305', name: 'web_search' },
  ]);
});

test('request: fields the messages protocol cannot carry are listed in dropped', (t) => {
  const { body, dropped } = tr.request(
    parseRequest('chat-completions', {
      model: 'c',
      messages: [{ role: 'user', content: 'Hi' }],
      response_format: { type: 'json_object' },
      n: 2,
      tools: [{ type: 'image_generation' }],
      frequency_penalty: 0.5,
      presence_penalty: 0.1,
      logprobs: true,
      seed: 7,
    }),
  );
  t.deepEqual(dropped.sort(), ['frequency_penalty', 'logprobs', 'n', 'presence_penalty', 'response_format', 'seed', 'tools.image_generation']);
  t.false('tools' in body);
  t.false('response_format' in body);
});

test('request: defaults that change nothing are not reported (n=1, response_format text, logprobs false)', (t) => {
  const { dropped } = tr.request(
    parseRequest('chat-completions', {
      model: 'c',
      messages: [{ role: 'user', content: 'Hi' }],
      n: 1,
      response_format: { type: 'text' },
      logprobs: false,
    }),
  );
  t.deepEqual(dropped, []);
});

test('request: a tool message with no matching call and bad arguments JSON are 400s naming the field', (t) => {
  const orphan = parseRequest('chat-completions', { model: 'c', messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] });
  const e1 = t.throws(() => tr.request(orphan), { instanceOf: GatewayError });
  t.is(e1!.param, 'messages.0.tool_call_id');
  const bad = parseRequest('chat-completions', {
    model: 'c',
    messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{oops' } }] }],
  });
  const e2 = t.throws(() => tr.request(bad), { instanceOf: GatewayError });
  t.is(e2!.param, 'messages.0.tool_calls.0.function.arguments');
  t.is(e2!.code, 'invalid_request');
});

// ---- response -------------------------------------------------------------

test('response: text message to chat.completion with cache-aware usage', (t) => {
  const out = tr.response(
    {
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [
        { type: 'text', text: 'Hi! My name is Claude.' },
        { type: 'text', text: ' How can I help?' },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 2095, output_tokens: 503, cache_creation_input_tokens: 100, cache_read_input_tokens: 1800 },
    },
    { created: 1_700_000_000 },
  );
  t.deepEqual(out, {
    id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'claude-sonnet-4-5-20250929',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hi! My name is Claude. How can I help?', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: 3995,
      completion_tokens: 503,
      total_tokens: 4498,
      prompt_tokens_details: { cached_tokens: 1800 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  });
});

test('response: tool_use to tool_calls with JSON string arguments', (t) => {
  const out = tr.response({
    id: 'msg_01Aq9w938a90dw8q',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: 'The user wants weather', signature: 'sig' },
      { type: 'text', text: "I'll check the current weather in San Francisco for you." },
      { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { location: 'San Francisco, CA', unit: 'celsius' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 472, output_tokens: 89 },
  }) as any;
  t.is(out.choices[0].finish_reason, 'tool_calls');
  t.is(out.choices[0].message.content, "I'll check the current weather in San Francisco for you.");
  t.deepEqual(out.choices[0].message.tool_calls, [
    {
      id: 'toolu_01A09q90qw90lq917835lq9',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
    },
  ]);
  t.deepEqual(out.usage.prompt_tokens_details, { cached_tokens: 0 });
  t.is(out.usage.total_tokens, 561);
});

test('response: stop reasons map to finish_reason', (t) => {
  const finish = (stop_reason: string) =>
    (tr.response({ id: 'm', content: [{ type: 'text', text: 'x' }], stop_reason, usage: { input_tokens: 1, output_tokens: 1 } }) as any)
      .choices[0].finish_reason;
  t.is(finish('end_turn'), 'stop');
  t.is(finish('stop_sequence'), 'stop');
  t.is(finish('max_tokens'), 'length');
  t.is(finish('tool_use'), 'tool_calls');
  t.is(finish('refusal'), 'content_filter');
});

test('response: the client model alias can be reported instead of the upstream id', (t) => {
  const out = tr.response({ id: 'm', model: 'claude-x-20250101', content: [], stop_reason: 'end_turn', usage: {} }, { model: 'claude-x' }) as any;
  t.is(out.model, 'claude-x');
});

// ---- stream ---------------------------------------------------------------

const textStream = messagesSse([
  {
    type: 'message_start',
    message: {
      id: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-sonnet-4-5',
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 25, output_tokens: 1, cache_read_input_tokens: 10, cache_creation_input_tokens: 0 },
    },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'ping' },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '!' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 15 } },
  { type: 'message_stop' },
]);

test('stream: text events become chat chunks, then a usage chunk and [DONE]', (t) => {
  const { frames, done, errors } = run(tr.stream({ includeUsage: true, created: 1_700_000_000 }), textStream);
  t.true(done);
  t.deepEqual(errors, []);
  const chunks = readFrames(frames).map((f) => f.json);
  const base = { id: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'claude-sonnet-4-5' };
  t.deepEqual(chunks, [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: { content: '!' }, logprobs: null, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usage: null },
    {
      ...base,
      choices: [],
      usage: {
        prompt_tokens: 35,
        completion_tokens: 15,
        total_tokens: 50,
        prompt_tokens_details: { cached_tokens: 10 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    },
    '[DONE]',
  ]);
  t.is(frames[frames.length - 1], 'data: [DONE]\n\n');
});

test('stream: without include_usage there is no usage chunk and no usage field', (t) => {
  const chunks = readFrames(run(tr.stream(), textStream, 1).frames).map((f) => f.json);
  t.is(chunks.length, 5);
  t.is(chunks[4], '[DONE]');
  t.false('usage' in chunks[0]);
  t.deepEqual(chunks.slice(0, 4).map((c: any) => c.choices.length), [1, 1, 1, 1]);
});

test('stream: tool_use blocks become indexed tool_call deltas; a parameterless tool gets "{}"', (t) => {
  const sse = messagesSse([
    { type: 'message_start', message: { id: 'msg_014p7gG3wDgGV9EUtLvnow3U', model: 'claude-sonnet-4-5', usage: { input_tokens: 472, output_tokens: 2 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Okay, let me check.' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: {} } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"location":' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: ' "San Francisco, CA"}' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} } },
    { type: 'content_block_stop', index: 2 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 89 } },
    { type: 'message_stop' },
  ]);
  const chunks = readFrames(run(tr.stream(), sse).frames).map((f) => f.json);
  const deltas = chunks.filter((c: any) => c !== '[DONE]').map((c: any) => c.choices[0].delta);
  t.deepEqual(deltas.slice(1), [
    { content: 'Okay, let me check.' },
    { tool_calls: [{ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] },
    { tool_calls: [{ index: 0, function: { arguments: ' "San Francisco, CA"}' } }] },
    { tool_calls: [{ index: 1, id: 'toolu_02', type: 'function', function: { name: 'get_time', arguments: '' } }] },
    { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
    {},
  ]);
  t.is((chunks[chunks.length - 2] as any).choices[0].finish_reason, 'tool_calls');
});

test('stream: an upstream error event is handed to the caller, not written', (t) => {
  const sse = messagesSse([
    { type: 'message_start', message: { id: 'msg_1', model: 'c', usage: { input_tokens: 5, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
    { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  ]);
  const { frames, errors, done } = run(tr.stream({ includeUsage: true }), sse);
  t.false(done);
  t.deepEqual(errors, [{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
  const chunks = readFrames(frames).map((f) => f.json);
  t.is(chunks.length, 2);
  t.false(frames.some((f) => f.includes('[DONE]')));
});

test('stream: an interrupted stream gets no injected terminator', (t) => {
  const cut = textStream.slice(0, textStream.indexOf('event: message_delta'));
  const { frames, done } = run(tr.stream(), cut);
  t.false(done);
  t.false(frames.some((f) => f.includes('[DONE]') || f.includes('"finish_reason":"stop"')));
});

test('stream: a stream cut after message_delta (finish known) is closed by end()', (t) => {
  const cut = textStream.slice(0, textStream.indexOf('event: message_stop'));
  const { frames } = run(tr.stream({ includeUsage: true }), cut);
  t.is(frames[frames.length - 1], 'data: [DONE]\n\n');
  t.is(readFrames(frames).at(-2)!.json.usage.completion_tokens, 15);
});
