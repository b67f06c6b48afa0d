import test from 'ava';
import { SseParser } from '../../protocols/sse';
import type { Protocol } from '../../protocols/types';
import { createUsageAccumulator, extractUsage } from '../../protocols/usage';
import { dataSse, messagesSse } from './helpers';

function accumulate(protocol: Protocol, sse: string, size = 9) {
  const acc = createUsageAccumulator(protocol);
  const parser = new SseParser();
  const bytes = Buffer.from(sse);
  for (let i = 0; i < bytes.length; i += size) for (const e of parser.push(bytes.subarray(i, i + size))) acc.push(e);
  for (const e of parser.end()) acc.push(e);
  return acc;
}

// ---- non-streaming -----------------------------------------------------------

test('chat-completions: cached tokens, reasoning inside completion (OpenAI)', (t) => {
  t.deepEqual(
    extractUsage('chat-completions', {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      usage: {
        prompt_tokens: 2006,
        completion_tokens: 300,
        total_tokens: 2306,
        prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 192, audio_tokens: 0 },
      },
    }),
    { inputTokens: 2006, outputTokens: 300, cachedTokens: 1920, cacheWriteTokens: 0, reasoningTokens: 192, serverToolCalls: 0 },
  );
});

test('chat-completions: xAI reasoning beside completion and server-side tool calls', (t) => {
  t.deepEqual(
    extractUsage('chat-completions', {
      usage: {
        prompt_tokens: 37,
        completion_tokens: 530,
        total_tokens: 800,
        prompt_tokens_details: { text_tokens: 37, cached_tokens: 6 },
        completion_tokens_details: { reasoning_tokens: 233 },
        num_sources_used: 4,
        num_server_side_tools_used: 3,
      },
    }),
    { inputTokens: 37, outputTokens: 763, cachedTokens: 6, cacheWriteTokens: 0, reasoningTokens: 233, serverToolCalls: 3 },
  );
});

test('messages: whole prompt includes cache reads and writes; server tool use counted', (t) => {
  t.deepEqual(
    extractUsage('messages', {
      id: 'msg_1',
      type: 'message',
      usage: {
        input_tokens: 50,
        cache_creation_input_tokens: 1200,
        cache_read_input_tokens: 3000,
        output_tokens: 420,
        server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 },
        output_tokens_details: { thinking_tokens: 100 },
      },
    }),
    { inputTokens: 4250, outputTokens: 420, cachedTokens: 3000, cacheWriteTokens: 1200, reasoningTokens: 100, serverToolCalls: 3 },
  );
});

test('responses: cached input and reasoning output details', (t) => {
  t.deepEqual(
    extractUsage('responses', {
      id: 'resp_1',
      object: 'response',
      status: 'completed',
      usage: {
        input_tokens: 328,
        input_tokens_details: { cached_tokens: 128 },
        output_tokens: 52,
        output_tokens_details: { reasoning_tokens: 20 },
        total_tokens: 380,
      },
    }),
    { inputTokens: 328, outputTokens: 52, cachedTokens: 128, cacheWriteTokens: 0, reasoningTokens: 20, serverToolCalls: 0 },
  );
});

test('generate-content: cached content, thoughts and tool-use prompt tokens', (t) => {
  t.deepEqual(
    extractUsage('generate-content', {
      candidates: [],
      usageMetadata: {
        promptTokenCount: 5000,
        cachedContentTokenCount: 4096,
        candidatesTokenCount: 210,
        thoughtsTokenCount: 640,
        toolUsePromptTokenCount: 90,
        totalTokenCount: 5940,
      },
    }),
    { inputTokens: 5090, outputTokens: 850, cachedTokens: 4096, cacheWriteTokens: 0, reasoningTokens: 640, serverToolCalls: 0 },
  );
});

test('no usage reported gives undefined', (t) => {
  t.is(extractUsage('chat-completions', { id: 'x' }), undefined);
  t.is(extractUsage('generate-content', null), undefined);
  t.is(extractUsage('messages', 'text'), undefined);
});

// ---- streams -------------------------------------------------------------

test('chat-completions stream: usage chunk, output characters, [DONE]', (t) => {
  const acc = accumulate(
    'chat-completions',
    dataSse([
      { id: 'c', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], usage: null },
      { id: 'c', choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }], usage: null },
      { id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a":1}' } }] }, finish_reason: null }], usage: null },
      { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: null },
      { id: 'c', choices: [], usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29, prompt_tokens_details: { cached_tokens: 8 } } },
      '[DONE]',
    ]),
  );
  t.true(acc.completed);
  t.is(acc.outputChars, 5 + 1 + 7);
  t.deepEqual(acc.usage, { inputTokens: 20, outputTokens: 9, cachedTokens: 8, cacheWriteTokens: 0, reasoningTokens: 0, serverToolCalls: 0 });
});

test('chat-completions stream: interrupted before finish is incomplete with no usage', (t) => {
  const acc = accumulate('chat-completions', dataSse([{ id: 'c', choices: [{ index: 0, delta: { content: 'Hello wor' } }] }]));
  t.false(acc.completed);
  t.is(acc.usage, undefined);
  t.is(acc.outputChars, 9);
});

test('chat-completions stream: a finish_reason chunk alone marks completion', (t) => {
  const acc = accumulate('chat-completions', dataSse([{ id: 'c', choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] }]));
  t.true(acc.completed);
});

const messagesStream = messagesSse([
  {
    type: 'message_start',
    message: { id: 'msg_1', model: 'c', usage: { input_tokens: 472, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 2 } },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Okay, searching.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } },
  { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city": "Paris"}' } },
  { type: 'content_block_stop', index: 1 },
  {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 89, server_tool_use: { web_search_requests: 1 } },
  },
  { type: 'message_stop' },
]);

test('messages stream: start usage updated by message_delta; complete on message_stop', (t) => {
  const acc = accumulate('messages', messagesStream);
  t.true(acc.completed);
  t.is(acc.outputChars, 16 + 11 + 17);
  t.deepEqual(acc.usage, { inputTokens: 2572, outputTokens: 89, cachedTokens: 2000, cacheWriteTokens: 100, reasoningTokens: 0, serverToolCalls: 1 });
});

test('messages stream: cut before message_stop keeps the partial usage and is incomplete', (t) => {
  const acc = accumulate('messages', messagesStream.slice(0, messagesStream.indexOf('event: message_delta')));
  t.false(acc.completed);
  t.is(acc.usage?.inputTokens, 2572);
  t.is(acc.usage?.outputTokens, 2);
});

test('responses stream: usage from response.completed; text deltas counted', (t) => {
  const events = [
    { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress', usage: null } },
    { type: 'response.in_progress', sequence_number: 1, response: { id: 'resp_1', status: 'in_progress', usage: null } },
    { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { type: 'message', id: 'msg_1', role: 'assistant', content: [] } },
    { type: 'response.output_text.delta', sequence_number: 3, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi' },
    { type: 'response.output_text.delta', sequence_number: 4, item_id: 'msg_1', output_index: 0, content_index: 0, delta: ' there!' },
    { type: 'response.output_text.done', sequence_number: 5, item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Hi there!' },
    { type: 'response.output_item.done', sequence_number: 6, output_index: 0, item: { type: 'message' } },
    {
      type: 'response.completed',
      sequence_number: 7,
      response: {
        id: 'resp_1',
        status: 'completed',
        usage: { input_tokens: 37, input_tokens_details: { cached_tokens: 0 }, output_tokens: 11, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 48 },
      },
    },
  ];
  const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
  const acc = accumulate('responses', sse);
  t.true(acc.completed);
  t.is(acc.outputChars, 9);
  t.deepEqual(acc.usage, { inputTokens: 37, outputTokens: 11, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, serverToolCalls: 0 });
  const cut = accumulate('responses', sse.slice(0, sse.indexOf('event: response.completed')));
  t.false(cut.completed);
  t.is(cut.usage, undefined);
  t.is(cut.outputChars, 9);
});

test('generate-content stream: last usageMetadata wins; finishReason completes', (t) => {
  const acc = accumulate(
    'generate-content',
    dataSse(
      [
        { candidates: [{ content: { parts: [{ text: 'The ' }], role: 'model' }, index: 0 }], usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 } },
        {
          candidates: [{ content: { parts: [{ text: 'answer.' }, { functionCall: { name: 'f', args: { x: 1 } } }], role: 'model' }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 4, thoughtsTokenCount: 30, cachedContentTokenCount: 2, totalTokenCount: 42 },
        },
      ],
      '\r\n\r\n',
    ),
  );
  t.true(acc.completed);
  t.is(acc.outputChars, 4 + 7 + JSON.stringify({ name: 'f', args: { x: 1 } }).length);
  t.deepEqual(acc.usage, { inputTokens: 8, outputTokens: 34, cachedTokens: 2, cacheWriteTokens: 0, reasoningTokens: 30, serverToolCalls: 0 });
});

test('generate-content stream: without a finishReason the stream is incomplete', (t) => {
  const acc = accumulate('generate-content', dataSse([{ candidates: [{ content: { parts: [{ text: 'partial' }] }, index: 0 }] }]));
  t.false(acc.completed);
  t.is(acc.outputChars, 7);
});
