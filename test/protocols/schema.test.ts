import test from 'ava';
import { GatewayError } from '../../domain/errors';
import { parseRequest } from '../../protocols/parse-request';
import type { Protocol } from '../../protocols/types';

function refusal(t: import('ava').ExecutionContext, protocol: Protocol, body: unknown): GatewayError {
  const err = t.throws(() => parseRequest(protocol, body), { instanceOf: GatewayError });
  t.is(err!.code, 'invalid_request');
  t.is(err!.status, 400);
  return err!;
}

// ---- chat-completions ---------------------------------------------------

const visionChat = {
  model: 'gpt-4o',
  messages: [
    { role: 'developer', content: 'You are a helpful assistant.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: "What's in this image?" },
        { type: 'image_url', image_url: { url: 'https://upload.wikimedia.org/boardwalk.jpg', detail: 'high' } },
      ],
    },
  ],
  max_completion_tokens: 300,
  stream: true,
  stream_options: { include_usage: true },
  temperature: 0.7,
  service_tier: 'auto',
};

test('chat: accepts the vendor vision example and keeps unknown fields', (t) => {
  const body = parseRequest('chat-completions', visionChat);
  t.is(body.messages.length, 2);
  t.is(body.messages[0].role, 'developer');
  t.is(body.stream_options?.include_usage, true);
  t.is(body.service_tier, 'auto');
});

test('chat: accepts a tool round trip (assistant tool_calls with null content, tool message)', (t) => {
  const body = parseRequest('chat-completions', {
    model: 'gpt-4.1',
    messages: [
      { role: 'user', content: 'Weather in Boston?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Boston, MA"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_abc', content: '{"temperature":22}' },
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
      { type: 'web_search' },
    ],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    response_format: { type: 'json_object' },
    stop: ['\n\n'],
  });
  t.is(body.tools?.length, 2);
  t.deepEqual(body.tool_choice, { type: 'function', function: { name: 'get_weather' } });
});

test('chat: a bad role names the field and lists the roles', (t) => {
  const err = refusal(t, 'chat-completions', { model: 'm', messages: [{ role: 'robot', content: 'x' }] });
  t.is(err.message, 'messages[0].role: Invalid option: expected one of "system"|"developer"|"user"|"assistant"|"tool"');
  t.is(err.param, 'messages.0.role');
});

test('chat: temperature above 2 is refused', (t) => {
  const err = refusal(t, 'chat-completions', { ...visionChat, temperature: 2.5 });
  t.is(err.param, 'temperature');
  t.regex(err.message, /^temperature: Too big: expected number to be <=2/);
});

test('chat: a text part without text points at the text field', (t) => {
  const err = refusal(t, 'chat-completions', { model: 'm', messages: [{ role: 'user', content: [{ type: 'text' }] }] });
  t.is(err.param, 'messages.0.content.0.text');
});

test('chat: an unknown content part type is passed through untouched', (t) => {
  const body = parseRequest('chat-completions', {
    model: 'm',
    messages: [{ role: 'user', content: [{ type: 'video_url', video_url: { url: 'https://x/v.mp4' } }] }],
  });
  t.deepEqual(body.messages[0].content, [{ type: 'video_url', video_url: { url: 'https://x/v.mp4' } }]);
});

test('chat: content of the wrong type says what was expected', (t) => {
  const err = refusal(t, 'chat-completions', { model: 'm', messages: [{ role: 'user', content: 42 }] });
  t.is(err.message, 'messages[0].content: Invalid input: expected string or array, received number');
});

test('chat: a tool message needs tool_call_id; unknown tool types are refused', (t) => {
  t.is(refusal(t, 'chat-completions', { model: 'm', messages: [{ role: 'tool', content: 'x' }] }).param, 'messages.0.tool_call_id');
  const err = refusal(t, 'chat-completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'code_interpreter' }] });
  t.is(err.param, 'tools.0.type');
  t.regex(err.message, /"function"\|"web_search"\|"image_generation"/);
});

test('chat: messages must be a non-empty array and model is required', (t) => {
  t.is(refusal(t, 'chat-completions', { model: 'm', messages: [] }).param, 'messages');
  t.is(refusal(t, 'chat-completions', { messages: [{ role: 'user', content: 'x' }] }).param, 'model');
});

test('a body that is not an object is refused without a param', (t) => {
  const err = refusal(t, 'chat-completions', 'hello');
  t.is(err.param, undefined);
  t.is(err.message, 'Invalid input: expected object, received string');
});

// ---- messages -----------------------------------------------------------

test('messages: accepts the vendor tool-use example with system blocks and image', (t) => {
  const body = parseRequest('messages', {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
    tools: [
      {
        name: 'get_weather',
        description: 'Get the current weather in a given location',
        input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
    ],
    tool_choice: { type: 'any' },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
          { type: 'text', text: 'Describe this image.' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { location: 'SF' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: '15 degrees' }] },
    ],
  });
  t.is(body.tools?.length, 2);
  t.is(body.max_tokens, 1024);
});

test('messages: max_tokens is required', (t) => {
  const err = refusal(t, 'messages', { model: 'claude', messages: [{ role: 'user', content: 'Hi' }] });
  t.is(err.param, 'max_tokens');
  t.is(err.message, 'max_tokens is required');
});

test('messages: the system role is not a message role here', (t) => {
  const err = refusal(t, 'messages', { model: 'c', max_tokens: 5, messages: [{ role: 'system', content: 'x' }] });
  t.is(err.message, 'messages[0].role: Invalid option: expected one of "user"|"assistant"');
});

test('messages: a custom tool without input_schema and a bad tool_choice name the field', (t) => {
  const base = { model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] };
  t.is(refusal(t, 'messages', { ...base, tools: [{ name: 'f', description: 'd' }] }).param, 'tools.0.input_schema');
  const err = refusal(t, 'messages', { ...base, tool_choice: { type: 'required' } });
  t.is(err.message, 'tool_choice.type: Invalid option: expected one of "auto"|"any"|"tool"|"none"');
  t.is(refusal(t, 'messages', { ...base, tool_choice: { type: 'tool' } }).param, 'tool_choice.name');
});

test('messages: temperature is 0..1 here; a tool_result needs its tool_use_id', (t) => {
  const base = { model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] };
  t.is(refusal(t, 'messages', { ...base, temperature: 1.5 }).param, 'temperature');
  const err = refusal(t, 'messages', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] });
  t.is(err.param, 'messages.0.content.0.tool_use_id');
});

// ---- generate-content ---------------------------------------------------

test('generate-content: accepts the vendor multi-turn example with function declarations', (t) => {
  const body = parseRequest('generate-content', {
    contents: [
      { role: 'user', parts: [{ text: 'Hello' }] },
      { role: 'model', parts: [{ text: 'Great to meet you. What would you like to know?' }] },
      { role: 'user', parts: [{ text: 'I have two dogs in my house. How many paws are in my house?' }] },
    ],
    systemInstruction: { parts: [{ text: 'You are a cat. Your name is Neko.' }] },
    generationConfig: { stopSequences: ['Title'], temperature: 1.0, maxOutputTokens: 800, topP: 0.8, topK: 10 },
    tools: [{ functionDeclarations: [{ name: 'count_paws', description: 'Count paws', parameters: { type: 'OBJECT', properties: { dogs: { type: 'INTEGER' } } } }] }],
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['count_paws'] } },
  });
  t.is(body.contents.length, 3);
  t.is(body.generationConfig?.maxOutputTokens, 800);
});

test('generate-content: snake_case field names (as in the vendor curl samples) are accepted and normalized', (t) => {
  const body = parseRequest('generate-content', {
    system_instruction: { parts: [{ text: 'Be brief.' }] },
    contents: [
      {
        parts: [
          { text: 'Caption this image.' },
          { inline_data: { mime_type: 'image/jpeg', data: '/9j/4AAQ' } },
          { function_response: { name: 'f', response: { user_id: 1 } } },
        ],
      },
    ],
    generation_config: { max_output_tokens: 100, thinking_config: { thinking_budget: 0 } },
    tool_config: { function_calling_config: { mode: 'AUTO' } },
  });
  t.deepEqual(body.systemInstruction, { parts: [{ text: 'Be brief.' }] });
  t.deepEqual(body.contents[0].parts[1].inlineData, { mimeType: 'image/jpeg', data: '/9j/4AAQ' });
  // user data inside functionResponse.response keeps its own keys
  t.deepEqual(body.contents[0].parts[2].functionResponse, { name: 'f', response: { user_id: 1 } });
  t.is(body.generationConfig?.maxOutputTokens, 100);
  t.deepEqual(body.generationConfig?.thinkingConfig, { thinkingBudget: 0 });
  t.is(body.toolConfig?.functionCallingConfig?.mode, 'AUTO');
});

test('generate-content: bad role, missing contents, temperature and inlineData errors name the field', (t) => {
  t.is(refusal(t, 'generate-content', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }).message,
    'contents[0].role: Invalid option: expected one of "user"|"model"');
  t.is(refusal(t, 'generate-content', {}).param, 'contents');
  t.is(refusal(t, 'generate-content', { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { temperature: 3 } }).param,
    'generationConfig.temperature');
  t.is(refusal(t, 'generate-content', { contents: [{ parts: [{ inline_data: { mime_type: 'image/png' } }] }] }).param,
    'contents.0.parts.0.inlineData.data');
});

// ---- responses ----------------------------------------------------------

test('responses: accepts a message array with vision parts, instructions, reasoning and tools', (t) => {
  const body = parseRequest('responses', {
    model: 'gpt-5',
    instructions: 'Talk like a pirate.',
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'what is in this image?' },
          { type: 'input_image', image_url: 'https://example.com/a.jpg', detail: 'auto' },
        ],
      },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: '{"ok":true}' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
    ],
    reasoning: { effort: 'low' },
    max_output_tokens: 500,
    tools: [{ type: 'web_search' }, { type: 'image_generation', size: '1024x1024' }, { type: 'function', name: 'f', parameters: { type: 'object' } }],
    tool_choice: { type: 'function', name: 'f' },
    parallel_tool_calls: false,
  });
  t.is(Array.isArray(body.input) ? body.input.length : 0, 4);
  t.is(parseRequest('responses', { model: 'gpt-5', input: 'Tell me a story.' }).input, 'Tell me a story.');
});

test('responses: previous_response_id is refused with the reason', (t) => {
  const err = refusal(t, 'responses', { model: 'gpt-5', input: 'hi', previous_response_id: 'resp_123' });
  t.is(err.param, 'previous_response_id');
  t.regex(err.message, /^previous_response_id: previous_response_id is not supported/);
});

test('responses: reasoning effort, input item fields and max_output_tokens are checked', (t) => {
  t.is(refusal(t, 'responses', { model: 'm', input: 'x', reasoning: { effort: 'extreme' } }).message,
    'reasoning.effort: Invalid option: expected one of "low"|"medium"|"high"');
  t.is(refusal(t, 'responses', { model: 'm', input: [{ type: 'function_call', call_id: 'c', arguments: '{}' }] }).param,
    'input.0.name');
  t.is(refusal(t, 'responses', { model: 'm', input: [{ role: 'robot', content: 'x' }] }).param, 'input.0.role');
  t.is(refusal(t, 'responses', { model: 'm', input: 'x', max_output_tokens: 0 }).param, 'max_output_tokens');
});

