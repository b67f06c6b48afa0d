import type { CanonicalResponse, FinishReason } from '../../canonical/response';
import type { NormalizedUsage } from '../../usage/normalized';
import { unixNow } from '../ids';

export const CHAT_FINISH_OUT: Record<FinishReason, string> = {
  stop: 'stop',
  stop_sequence: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
};

export interface ChatResponseOptions {
  /** Model id to report when the upstream did not (or to report the client's alias). */
  model?: string;
  created?: number;
}

/** canonical response -> chat.completion object. */
export function encodeChatResponse(res: CanonicalResponse, opts: ChatResponseOptions = {}): Record<string, unknown> {
  return {
    id: res.id,
    object: 'chat.completion',
    created: res.created ?? opts.created ?? unixNow(),
    model: opts.model ?? res.model,
    choices: res.choices.map((c, index) => {
      const text = c.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      const calls = c.content.flatMap((b) =>
        b.type === 'tool_call' ? [{ id: b.id, type: 'function', function: { name: b.name, arguments: b.arguments } }] : [],
      );
      const message: Record<string, unknown> = {
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : text,
        refusal: null,
      };
      if (calls.length > 0) message.tool_calls = calls;
      return { index, message, logprobs: null, finish_reason: CHAT_FINISH_OUT[c.finish] };
    }),
    usage: chatUsageOut(res.usage),
  };
}

export function chatUsageOut(u: NormalizedUsage): Record<string, unknown> {
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
  };
}
