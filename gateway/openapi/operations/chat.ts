import { z } from 'zod';
import { ChatCompletionsRequest } from '../../../protocols/chat-completions/schema';
import { MessagesRequest } from '../../../protocols/messages/schema';
import { ResponsesRequest } from '../../../protocols/responses/schema';
import { GenerateContentRequest } from '../../../protocols/generate-content/schema';
import { BILLABLE_ERRORS, type Operation } from '../registry';
import { StreamQuery } from '../../routes/chat';

/** The four chat protocols (spec 1 sections 4.1-4.4, 4.10). Bodies are the protocol schemas `parseRequest` validates with. */

const ChatCompletion = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number(),
  model: z.string(),
  choices: z.array(z.looseObject({ index: z.number(), message: z.looseObject({ role: z.string() }), finish_reason: z.string().nullable() })),
  usage: z.looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() }).optional(),
});
const Message = z.looseObject({
  id: z.string(),
  type: z.literal('message'),
  role: z.string(),
  model: z.string(),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullable(),
  usage: z.looseObject({ input_tokens: z.number(), output_tokens: z.number() }),
});
const Response = z.looseObject({ id: z.string(), object: z.literal('response'), created_at: z.number(), status: z.string(), model: z.string(), output: z.array(z.looseObject({ type: z.string() })) });
const GenerateContentResponse = z.looseObject({
  candidates: z.array(z.looseObject({ content: z.looseObject({}).optional(), finishReason: z.string().optional(), index: z.number().optional() })),
  usageMetadata: z.looseObject({}).optional(),
});

const sse = 'text/event-stream';
const Model = z.object({ model: z.string().meta({ description: 'Model id, e.g. gemini-2.5-flash', examples: ['gemini-2.5-flash'] }) });

export const chatOperations: Operation[] = [
  {
    method: 'post', path: '/v1/chat/completions', operationId: 'createChatCompletion', tag: 'Chat',
    summary: 'Chat completions (OpenAI protocol)',
    description: 'Streaming with `stream: true` (SSE, ends with `data: [DONE]`). Built-in tools `web_search` and `image_generation` need `stream: true`. Agent keys call only this endpoint (spec 3 section 4.3). A translated call carries `X-Protocol-Translation`.',
    auth: 'key', errors: 'openai', errorStatuses: BILLABLE_ERRORS,
    body: { schema: ChatCompletionsRequest, example: { model: 'gpt-5-mini', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 } },
    responses: { 200: { description: 'The completion (or an SSE stream when `stream` is true)', schema: ChatCompletion, contentType: `application/json, ${sse}` } },
  },
  {
    method: 'post', path: '/v1/messages', operationId: 'createMessage', tag: 'Chat',
    summary: 'Messages (Anthropic protocol)',
    description: 'Send `anthropic-version: 2023-06-01` (the SDKs do). Errors in the Anthropic shape.',
    auth: 'key', errors: 'anthropic', errorStatuses: BILLABLE_ERRORS,
    headers: [{ name: 'anthropic-version', description: 'Protocol version, a date such as 2023-06-01', schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', example: '2023-06-01' } }],
    body: { schema: MessagesRequest, example: { model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] } },
    responses: { 200: { description: 'The message (or an SSE stream when `stream` is true)', schema: Message, contentType: `application/json, ${sse}` } },
  },
  {
    method: 'post', path: '/v1/responses', operationId: 'createResponse', tag: 'Chat',
    summary: 'Responses (OpenAI responses protocol)',
    description: '`previous_response_id` is refused: sessions are not stored, send the whole conversation in `input`.',
    auth: 'key', errors: 'openai', errorStatuses: BILLABLE_ERRORS,
    body: { schema: ResponsesRequest, example: { model: 'gpt-5-mini', instructions: 'Be brief.', input: [{ role: 'user', content: 'Hello' }], max_output_tokens: 16 } },
    responses: { 200: { description: 'The response (or SSE events when `stream` is true)', schema: Response, contentType: `application/json, ${sse}` } },
  },
  ...(['/v1beta', '/v1'] as const).flatMap((prefix): Operation[] => [
    {
      method: 'post', path: `${prefix}/models/{model}:generateContent`, operationId: `generateContent${prefix === '/v1' ? 'V1' : ''}`, tag: 'Chat',
      summary: `Generate content (Gemini protocol)${prefix === '/v1' ? ', under /v1' : ''}`,
      description: 'The model is in the path. Errors in the Gemini shape. Served identically under /v1beta and /v1.',
      auth: 'key', errors: 'gemini', errorStatuses: [...BILLABLE_ERRORS, 404],
      params: Model,
      body: { schema: GenerateContentRequest, example: { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], generationConfig: { maxOutputTokens: 16 } } },
      responses: { 200: { description: 'The generated content', schema: GenerateContentResponse } },
    },
    {
      method: 'post', path: `${prefix}/models/{model}:streamGenerateContent`, operationId: `streamGenerateContent${prefix === '/v1' ? 'V1' : ''}`, tag: 'Chat',
      summary: `Stream generated content (Gemini protocol)${prefix === '/v1' ? ', under /v1' : ''}`,
      description: 'A JSON array streamed chunk by chunk, or SSE with `?alt=sse`.',
      auth: 'key', errors: 'gemini', errorStatuses: [...BILLABLE_ERRORS, 404],
      params: Model,
      query: StreamQuery,
      body: { schema: GenerateContentRequest, example: { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], generationConfig: { maxOutputTokens: 16 } } },
      responses: { 200: { description: 'Chunks as a JSON array, or SSE with alt=sse', schema: z.array(GenerateContentResponse), contentType: `application/json, ${sse}` } },
    },
  ]),
  {
    method: 'post', path: '/v1/embeddings', operationId: 'createEmbedding', tag: 'Chat',
    summary: 'Embeddings (retired)', description: 'Retired since 2026-07: always 404 `model_not_found`.',
    auth: 'key', errors: 'openai', errorStatuses: [400, 401, 402, 404, 413, 429],
    body: { schema: z.looseObject({ model: z.string().optional(), input: z.unknown().optional() }), example: { model: 'text-embedding-3-small', input: 'hello' } },
    responses: {},
  },
];
