import type { CanonicalResponse, FinishReason, ResponseBlock } from '../../canonical/response';
import type { MessagesResponse } from '../../messages/wire';
import { messagesUsage } from '../../usage/messages';
import { ZERO_USAGE } from '../../usage/normalized';
import { newId } from '../ids';

export const MESSAGES_FINISH_IN: Record<string, FinishReason> = {
  end_turn: 'stop',
  pause_turn: 'stop',
  stop_sequence: 'stop_sequence',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/**
 * An upstream message -> canonical response. Text blocks are joined;
 * tool_use becomes a tool call with JSON-string arguments; thinking and the
 * vendor's own server-tool blocks are not part of the answer and are skipped.
 */
export function decodeMessagesResponse(json: unknown): CanonicalResponse {
  const r = (json ?? {}) as MessagesResponse;
  const content: ResponseBlock[] = [];
  let text = '';
  for (const b of r.content ?? []) {
    if (b.type === 'text') text += b.text ?? '';
    else if (b.type === 'tool_use') {
      content.push({ type: 'tool_call', id: b.id ?? newId('toolu_'), name: b.name ?? '', arguments: JSON.stringify(b.input ?? {}) });
    }
  }
  if (text) content.unshift({ type: 'text', text });
  return {
    id: r.id ?? newId('msg_'),
    model: r.model ?? '',
    choices: [
      {
        content,
        finish: MESSAGES_FINISH_IN[r.stop_reason ?? ''] ?? 'stop',
        stopSequence: r.stop_sequence ?? null,
      },
    ],
    usage: messagesUsage(r.usage) ?? { ...ZERO_USAGE },
  };
}
