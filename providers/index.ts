import type { ChatProvider } from './types';
import { openaiChat } from './openai-chat';
import { openaiResponses } from './openai-responses';
import { anthropicMessages } from './anthropic-messages';
import { gemini } from './gemini';

/** Chat adapters by the wire protocol a channel's upstream speaks (catalogue `upstream`). */
export const chatProviders: Record<string, ChatProvider> = {
  'chat-completions': openaiChat,
  responses: openaiResponses,
  messages: anthropicMessages,
  'generate-content': gemini,
};

export type { ChatProvider, UpstreamCall } from './types';
