import type { CanonicalChoice, CanonicalResponse, FinishReason, ResponseBlock } from '../../canonical/response';
import type { ChatCompletion } from '../../chat-completions/wire';
import { chatUsage } from '../../usage/chat-completions';
import { ZERO_USAGE } from '../../usage/normalized';
import { newId } from '../ids';

export const CHAT_FINISH_IN: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

/** An upstream chat.completion -> canonical response. */
export function decodeChatResponse(json: unknown): CanonicalResponse {
  const r = (json ?? {}) as ChatCompletion;
  const choices: CanonicalChoice[] = (r.choices ?? []).map((c) => {
    const m = c.message ?? {};
    const content: ResponseBlock[] = [];
    const text = typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join('');
    if (text) content.push({ type: 'text', text });
    for (const t of m.tool_calls ?? []) {
      content.push({
        type: 'tool_call',
        id: t.id ?? newId('call_'),
        name: t.function?.name ?? '',
        arguments: t.function?.arguments ?? '{}',
      });
    }
    return { content, finish: CHAT_FINISH_IN[c.finish_reason ?? ''] ?? 'stop' };
  });
  return {
    id: r.id ?? newId('chatcmpl-'),
    model: r.model ?? '',
    ...(r.created !== undefined ? { created: r.created } : {}),
    choices,
    usage: chatUsage(r.usage) ?? { ...ZERO_USAGE },
  };
}
