import type { CanonicalResponse, FinishReason } from '../../canonical/response';
import type { NormalizedUsage } from '../../usage/normalized';
import { parseInput } from '../json-args';

export const MESSAGES_FINISH_OUT: Record<FinishReason, string> = {
  stop: 'end_turn',
  stop_sequence: 'stop_sequence',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

/** canonical response (first choice) -> messages `message` object. */
export function encodeMessagesResponse(res: CanonicalResponse, opts: { model?: string } = {}): Record<string, unknown> {
  const choice = res.choices[0] ?? { content: [], finish: 'stop' as const };
  const content = choice.content.map((b) =>
    b.type === 'text'
      ? { type: 'text', text: b.text }
      : { type: 'tool_use', id: b.id, name: b.name, input: parseInput(b.arguments) },
  );
  return {
    id: res.id,
    type: 'message',
    role: 'assistant',
    model: opts.model ?? res.model,
    content,
    stop_reason: MESSAGES_FINISH_OUT[choice.finish],
    stop_sequence: choice.finish === 'stop_sequence' ? (choice.stopSequence ?? null) : null,
    usage: messagesUsageOut(res.usage),
  };
}

/** Normalized usage in this protocol's terms: input_tokens excludes cache reads and writes. */
export function messagesUsageOut(u: NormalizedUsage): Record<string, number> {
  return {
    input_tokens: Math.max(0, u.inputTokens - u.cachedTokens - u.cacheWriteTokens),
    output_tokens: u.outputTokens,
    cache_creation_input_tokens: u.cacheWriteTokens,
    cache_read_input_tokens: u.cachedTokens,
  };
}
