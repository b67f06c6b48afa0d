/**
 * Usage for billing, from any of the four protocols: `extractUsage` reads a
 * non-streamed response body, `createUsageAccumulator` watches a stream.
 */
import type { Protocol } from './types';
import type { UsageAccumulator } from './usage/accumulator';
import { chatUsage } from './usage/chat-completions';
import { ChatCompletionsUsageAccumulator } from './usage/chat-completions-stream';
import { generateContentUsage } from './usage/generate-content';
import { GenerateContentUsageAccumulator } from './usage/generate-content-stream';
import { messagesUsage } from './usage/messages';
import { MessagesUsageAccumulator } from './usage/messages-stream';
import { asRecord, type NormalizedUsage } from './usage/normalized';
import { responsesUsage } from './usage/responses';
import { ResponsesUsageAccumulator } from './usage/responses-stream';

export type { NormalizedUsage } from './usage/normalized';
export { ZERO_USAGE } from './usage/normalized';
export type { UsageAccumulator } from './usage/accumulator';
export { chatUsage, messagesUsage, responsesUsage, generateContentUsage };
export { outputChars } from './usage/output-chars';
export {
  ChatCompletionsUsageAccumulator,
  MessagesUsageAccumulator,
  ResponsesUsageAccumulator,
  GenerateContentUsageAccumulator,
};

/** Usage of a non-streamed response body of `protocol`; undefined when it reports none. */
export function extractUsage(protocol: Protocol, body: unknown): NormalizedUsage | undefined {
  const r = asRecord(body);
  if (!r) return undefined;
  switch (protocol) {
    case 'chat-completions':
      return chatUsage(r.usage);
    case 'messages':
      return messagesUsage(r.usage);
    case 'responses':
      return responsesUsage(r.usage);
    case 'generate-content':
      return generateContentUsage(r.usageMetadata);
  }
}

export function createUsageAccumulator(protocol: Protocol): UsageAccumulator {
  switch (protocol) {
    case 'chat-completions':
      return new ChatCompletionsUsageAccumulator();
    case 'messages':
      return new MessagesUsageAccumulator();
    case 'responses':
      return new ResponsesUsageAccumulator();
    case 'generate-content':
      return new GenerateContentUsageAccumulator();
  }
}
