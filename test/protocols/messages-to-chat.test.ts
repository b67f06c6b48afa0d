import test from 'ava';
import { GatewayError } from '../../domain/errors';
import { parseRequest } from '../../protocols/parse-request';
import { getTranslator } from '../../protocols/translate/registry';
import { dataSse, readFrames, run } from './helpers';

const tr = getTranslator('messages', 'chat-completions')!;

test('name is the X-Protocol-Translation value', (t) => {
  t.is(tr.name, 'messages_to_chat-completions');
});

test('request: system, images, documents, tool_use/tool_result, tools, tool_choice, sampling', (t) => {
  const { body, dropped } = tr.request(
    parseRequest('messages', {
      model: 'gpt-4.1',
      max_tokens: 1024,
      system: 'You are a meticulous analyst.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/chart.png' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'report.pdf' },
            { type: 'text', text: 'Summarize, then get the weather in Paris.' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Summary: fine.' },
            { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: '18C, sunny' }] },
            { type: 'text', text: 'And in Celsius only?' },
          ],
        },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'Get the current weather in a given location',
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
      ],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
      temperature: 0.3,
      top_p: 0.8,
      stop_sequences: ['</answer>'],
      metadata: { user_id: 'u-7' },
      stream: true,
    }),
  );
  t.deepEqual(dropped, []);
  t.deepEqual(body, {
    model: 'gpt-4.1',
    messages: [
      { role: 'system', content: 'You are a meticulous analyst.' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          { type: 'image_url', image_url: { url: 'https://example.com/chart.png' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0x', filename: 'report.pdf' } },
          { type: 'text', text: 'Summarize, then get the weather in Paris.' },
        ],
      },
      {
        role: 'assistant',
        content: 'Summary: fine.',
        tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_01', content: '18C, sunny' },
      { role: 'user', content: 'And in Celsius only?' },
    ],
    max_tokens: 1024,
    temperature: 0.3,
    top_p: 0.8,
    stop: ['</answer>'],
    user: 'u-7',
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Get the current weather in a given location',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
      { type: 'web_search' },
    ],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    parallel_tool_calls: false,
    stream: true,
    stream_options: { include_usage: true },
  });
});

test('request: tool_choice any/auto/none; dropped top_k, thinking, cache_control and unknown server tools', (t) => {
  const base = {
    model: 'm',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'hi' }],
    tools: [{ name: 'f', input_schema: { type: 'object' } }],
  };
  const choice = (tool_choice: unknown) => tr.request(parseRequest('messages', { ...base, tool_choice })).body.tool_choice;
  t.is(choice({ type: 'any' }), 'required');
  t.is(choice({ type: 'auto' }), 'auto');
  t.is(choice({ type: 'none' }), 'none');
  const { dropped } = tr.request(
    parseRequest('messages', {
      ...base,
      system: [{ type: 'text', text: 'cached', cache_control: { type: 'ephemeral' } }],
      top_k: 40,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      tools: [...base.tools, { type: 'bash_20250124', name: 'bash' }],
    }),
  );
  t.deepEqual(dropped.sort(), ['cache_control', 'thinking', 'tools.bash_20250124', 'top_k']);
});

test('request: a tool_result for an unknown tool_use_id is a 400', (t) => {
  const body = parseRequest('messages', {
    model: 'm',
    max_tokens: 10,
    messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'r' }] }],
  });
  const err = t.throws(() => tr.request(body), { instanceOf: GatewayError });
  t.is(err!.param, 'messages.0.content');
});

test('response: chat.completion to message, with cached usage and tool calls', (t) => {
  const out = tr.response({
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion',
    created: 1741570283,
    model: 'gpt-4o-2024-08-06',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' } }],
          refusal: null,
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ],
    usage: {
      prompt_tokens: 1117,
      completion_tokens: 46,
      total_tokens: 1163,
      prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  });
  t.deepEqual(out, {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    type: 'message',
    role: 'assistant',
    model: 'gpt-4o-2024-08-06',
    content: [
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', input: { location: 'Paris, France' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 93, output_tokens: 46, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024 },
  });
});

test('response: finish reasons map to stop reasons', (t) => {
  const stop = (finish_reason: string) =>
    (tr.response({ id: 'x', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'a' }, finish_reason }] }) as any).stop_reason;
  t.is(stop('stop'), 'end_turn');
  t.is(stop('length'), 'max_tokens');
  t.is(stop('tool_calls'), 'tool_use');
  t.is(stop('content_filter'), 'refusal');
});

const chatStream = dataSse([
  { id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], usage: null },
  { id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }], usage: null },
  { id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: ' there' }, logprobs: null, finish_reason: null }], usage: null },
  {
    id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini',
    choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'lookup', arguments: '' } }] }, finish_reason: null }],
    usage: null,
  },
  { id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }, finish_reason: null }], usage: null },
  { id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"cats"}' } }] }, finish_reason: null }], usage: null },
  { id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini', choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }], usage: null },
  {
    id: 'chatcmpl-123', object: 'chat.completion.chunk', created: 1694268190, model: 'gpt-4o-mini', choices: [],
    usage: { prompt_tokens: 50, completion_tokens: 12, total_tokens: 62, prompt_tokens_details: { cached_tokens: 32 } },
  },
  '[DONE]',
]);

test('stream: chat chunks become the messages event sequence', (t) => {
  const { frames, done } = run(tr.stream(), chatStream, 11);
  t.true(done);
  const events = readFrames(frames);
  t.deepEqual(
    events.map((e) => e.event),
    [
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ],
  );
  t.true(events.every((e) => e.json.type === e.event));
  t.deepEqual(events[0].json.message, {
    id: 'chatcmpl-123',
    type: 'message',
    role: 'assistant',
    model: 'gpt-4o-mini',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0 },
  });
  t.deepEqual(events[1].json, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  t.deepEqual(events[2].json, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } });
  t.deepEqual(events[5].json, { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_abc', name: 'lookup', input: {} } });
  t.deepEqual(events[6].json, { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":' } });
  t.deepEqual(events[8].json, { type: 'content_block_stop', index: 1 });
  t.deepEqual(events[9].json, {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { input_tokens: 18, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 32 },
  });
  t.deepEqual(events[10].json, { type: 'message_stop' });
  t.true(frames[0].startsWith('event: message_start\ndata: {'));
});

test('stream: an upstream chat error chunk is handed to the caller', (t) => {
  const sse = dataSse([{ error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }]);
  const { errors, frames } = run(tr.stream(), sse);
  t.deepEqual(errors, [{ error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }]);
  t.deepEqual(frames, []);
});
