import { z } from 'zod';
import { openUnion } from '../validation/open-union';
import { PublicUrlOrDataImage } from '../../domain/url-policy';

/** POST /v1/chat/completions request body (spec 1 section 4.1, OpenAI chat completions). */

const TextPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageUrlPart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: PublicUrlOrDataImage, detail: z.enum(['auto', 'low', 'high']).nullish() }),
});
const InputAudioPart = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.string() }),
});
const FilePart = z.looseObject({
  type: z.literal('file'),
  file: z.looseObject({ file_data: z.string().nullish(), file_id: z.string().nullish(), filename: z.string().nullish() }),
});
const RefusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

export const ChatContentPart = openUnion([TextPart, ImageUrlPart, InputAudioPart, FilePart, RefusalPart]);
export type ChatContentPart = z.infer<typeof ChatContentPart>;
/** The parts this gateway understands; anything else passes validation untouched. */
export type KnownChatContentPart =
  | z.infer<typeof TextPart>
  | z.infer<typeof ImageUrlPart>
  | z.infer<typeof InputAudioPart>
  | z.infer<typeof FilePart>
  | z.infer<typeof RefusalPart>;

const TextContent = z.union([z.string(), z.array(ChatContentPart)]);

export const ChatToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
export type ChatToolCall = z.infer<typeof ChatToolCall>;

const name = z.string().nullish();
const SystemMessage = z.looseObject({ role: z.literal('system'), content: TextContent, name });
const DeveloperMessage = z.looseObject({ role: z.literal('developer'), content: TextContent, name });
const UserMessage = z.looseObject({ role: z.literal('user'), content: TextContent, name });
const AssistantMessage = z.looseObject({
  role: z.literal('assistant'),
  content: TextContent.nullish(),
  tool_calls: z.array(ChatToolCall).nullish(),
  refusal: z.string().nullish(),
  name,
});
const ToolMessage = z.looseObject({ role: z.literal('tool'), content: TextContent, tool_call_id: z.string() });

export const ChatMessage = z.discriminatedUnion('role', [
  SystemMessage,
  DeveloperMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
]);
export type ChatMessage = z.infer<typeof ChatMessage>;

export const ChatFunctionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
});
export const ChatTool = z.discriminatedUnion('type', [
  ChatFunctionTool,
  z.looseObject({ type: z.literal('web_search') }),
  z.looseObject({ type: z.literal('image_generation') }),
]);
export type ChatTool = z.infer<typeof ChatTool>;

export const ChatToolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
]);
export type ChatToolChoice = z.infer<typeof ChatToolChoice>;

export const ChatResponseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string(),
      description: z.string().nullish(),
      schema: z.record(z.string(), z.unknown()).nullish(),
      strict: z.boolean().nullish(),
    }),
  }),
]);
export type ChatResponseFormat = z.infer<typeof ChatResponseFormat>;

const positiveInt = z.int().min(1);

export const ChatCompletionsRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessage).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  max_tokens: positiveInt.nullish(),
  max_completion_tokens: positiveInt.nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  n: positiveInt.nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  seed: z.int().nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.int().min(0).max(20).nullish(),
  user: z.string().nullish(),
  tools: z.array(ChatTool).nullish(),
  tool_choice: ChatToolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: ChatResponseFormat.nullish(),
});
export type ChatCompletionsRequest = z.infer<typeof ChatCompletionsRequest>;
