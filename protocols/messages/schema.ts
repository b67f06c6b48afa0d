import { z } from 'zod';
import { openUnion } from '../validation/open-union';
import { PublicUrl } from '../../domain/url-policy';

/** POST /v1/messages request body (spec 1 section 4.2, Anthropic Messages API). */

const CacheControl = z.looseObject({ type: z.literal('ephemeral') }).nullish();

const ImageSource = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: PublicUrl }),
  z.looseObject({ type: z.literal('file'), file_id: z.string() }),
]);
const DocumentSource = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: PublicUrl }),
  z.looseObject({ type: z.literal('text'), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal('content'), content: z.unknown() }),
  z.looseObject({ type: z.literal('file'), file_id: z.string() }),
]);

export const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: CacheControl });
export const ImageBlock = z.looseObject({ type: z.literal('image'), source: ImageSource, cache_control: CacheControl });
export const DocumentBlock = z.looseObject({
  type: z.literal('document'),
  source: DocumentSource,
  title: z.string().nullish(),
  cache_control: CacheControl,
});
export const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  cache_control: CacheControl,
});
const ToolResultContent = z.union([z.string(), z.array(openUnion([TextBlock, ImageBlock, DocumentBlock]))]);
export const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: ToolResultContent.optional(),
  is_error: z.boolean().nullish(),
  cache_control: CacheControl,
});
export const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
export const RedactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

export const MessagesContentBlock = openUnion([
  TextBlock,
  ImageBlock,
  DocumentBlock,
  ToolUseBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
]);
export type MessagesContentBlock = z.infer<typeof MessagesContentBlock>;
export type KnownMessagesBlock =
  | z.infer<typeof TextBlock>
  | z.infer<typeof ImageBlock>
  | z.infer<typeof DocumentBlock>
  | z.infer<typeof ToolUseBlock>
  | z.infer<typeof ToolResultBlock>
  | z.infer<typeof ThinkingBlock>
  | z.infer<typeof RedactedThinkingBlock>;

export const MessagesMessage = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(MessagesContentBlock)]),
});
export type MessagesMessage = z.infer<typeof MessagesMessage>;

/** A client tool (`name`, `description`, `input_schema`); `type` is absent or `custom`. */
export const MessagesCustomTool = z.looseObject({
  type: z.literal('custom').optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  cache_control: CacheControl,
});
/** A server tool run by the vendor, e.g. `{type: "web_search_20250305", name: "web_search"}`. */
export const MessagesServerTool = z.looseObject({
  type: z.string().refine((t) => t !== 'custom', { message: 'Invalid input', abort: true }),
  name: z.string(),
});
export const MessagesTool = z.union([MessagesCustomTool, MessagesServerTool]);
export type MessagesTool = z.infer<typeof MessagesTool>;
export type MessagesCustomTool = z.infer<typeof MessagesCustomTool>;

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
export const MessagesToolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), ...parallel }),
  z.looseObject({ type: z.literal('any'), ...parallel }),
  z.looseObject({ type: z.literal('tool'), name: z.string(), ...parallel }),
  z.looseObject({ type: z.literal('none') }),
]);
export type MessagesToolChoice = z.infer<typeof MessagesToolChoice>;

export const MessagesRequest = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.int().min(1),
  messages: z.array(MessagesMessage).min(1),
  system: z.union([z.string(), z.array(TextBlock)]).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.int().min(0).optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  tools: z.array(MessagesTool).optional(),
  tool_choice: MessagesToolChoice.optional(),
  thinking: z.looseObject({ type: z.string(), budget_tokens: z.int().min(1).optional() }).optional(),
});
export type MessagesRequest = z.infer<typeof MessagesRequest>;
