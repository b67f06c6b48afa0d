import type { RequestBody } from '../parse-request';
import type { Protocol } from '../types';
import { ChatStreamDecoder } from './chat-completions/decode-stream';
import { decodeChatRequest } from './chat-completions/decode-request';
import { decodeChatResponse } from './chat-completions/decode-response';
import { encodeChatRequest } from './chat-completions/encode-request';
import { encodeChatResponse } from './chat-completions/encode-response';
import { ChatStreamEncoder } from './chat-completions/encode-stream';
import { CHAT_FIELD_NAMES } from './chat-completions/field-names';
import { compose } from './compose';
import { decodeGenerateContentRequest } from './generate-content/decode-request';
import { decodeGenerateContentResponse } from './generate-content/decode-response';
import { GenerateContentStreamDecoder } from './generate-content/decode-stream';
import { encodeGenerateContentRequest } from './generate-content/encode-request';
import { encodeGenerateContentResponse } from './generate-content/encode-response';
import { GenerateContentStreamEncoder } from './generate-content/encode-stream';
import { GEMINI_FIELD_NAMES } from './generate-content/field-names';
import { decodeMessagesRequest } from './messages/decode-request';
import { decodeMessagesResponse } from './messages/decode-response';
import { MessagesStreamDecoder } from './messages/decode-stream';
import { encodeMessagesRequest } from './messages/encode-request';
import { encodeMessagesResponse } from './messages/encode-response';
import { MessagesStreamEncoder } from './messages/encode-stream';
import { MESSAGES_FIELD_NAMES } from './messages/field-names';
import type { Translator } from './types';

/** `max_tokens` sent to a messages upstream when neither the client nor the caller gave one. */
export const DEFAULT_MAX_TOKENS = 4096;

const chatClient = {
  client: 'chat-completions' as const,
  decodeRequest: (body: RequestBody<'chat-completions'>) => decodeChatRequest(body),
  fieldNames: CHAT_FIELD_NAMES,
  encodeResponse: encodeChatResponse,
  streamEncoder: (o: { includeUsage?: boolean; model?: string; created?: number }) => new ChatStreamEncoder(o),
};
const messagesClient = {
  client: 'messages' as const,
  decodeRequest: (body: RequestBody<'messages'>) => decodeMessagesRequest(body),
  fieldNames: MESSAGES_FIELD_NAMES,
  encodeResponse: encodeMessagesResponse,
  streamEncoder: (o: { model?: string }) => new MessagesStreamEncoder(o),
};
const geminiClient = {
  client: 'generate-content' as const,
  decodeRequest: (body: RequestBody<'generate-content'>, o: { model?: string; stream?: boolean }) =>
    decodeGenerateContentRequest(body, o),
  fieldNames: GEMINI_FIELD_NAMES,
  encodeResponse: encodeGenerateContentResponse,
  streamEncoder: (o: { model?: string }) => new GenerateContentStreamEncoder(o),
};

const messagesUpstream = {
  upstream: 'messages' as const,
  encodeRequest: (r: Parameters<typeof encodeMessagesRequest>[0], o: { defaultMaxTokens?: number }) =>
    encodeMessagesRequest(r, { defaultMaxTokens: o.defaultMaxTokens ?? DEFAULT_MAX_TOKENS }),
  decodeResponse: decodeMessagesResponse,
  streamDecoder: () => new MessagesStreamDecoder(),
};
const geminiUpstream = {
  upstream: 'generate-content' as const,
  encodeRequest: encodeGenerateContentRequest,
  decodeResponse: decodeGenerateContentResponse,
  streamDecoder: () => new GenerateContentStreamDecoder(),
};
const chatUpstream = {
  upstream: 'chat-completions' as const,
  encodeRequest: encodeChatRequest,
  decodeResponse: decodeChatResponse,
  streamDecoder: () => new ChatStreamDecoder(),
};

/**
 * Gateway translations (spec 1 section 4.10). The first two are used by
 * channels; the other three are implemented with the same care but no
 * channel triggers them.
 */
const TRANSLATORS = {
  'chat-completions>messages': compose({ ...chatClient, ...messagesUpstream }),
  'chat-completions>generate-content': compose({ ...chatClient, ...geminiUpstream }),
  'messages>chat-completions': compose({ ...messagesClient, ...chatUpstream }),
  'generate-content>chat-completions': compose({ ...geminiClient, ...chatUpstream }),
  'generate-content>messages': compose({ ...geminiClient, ...messagesUpstream }),
};

/** The translator from a client protocol to an upstream protocol, or undefined when there is none. */
export function getTranslator<C extends Protocol>(client: C, upstream: Protocol): Translator<RequestBody<C>> | undefined {
  const key = `${client}>${upstream}`;
  return (TRANSLATORS as Record<string, Translator<never>>)[key] as Translator<RequestBody<C>> | undefined;
}
