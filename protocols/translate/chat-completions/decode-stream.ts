import type { StreamDecoder, StreamDelta } from '../../canonical/stream';
import type { ChatChunk } from '../../chat-completions/wire';
import { chatUsage } from '../../usage/chat-completions';
import { newId } from '../ids';
import { tryParse } from '../json';
import { CHAT_FINISH_IN } from './decode-response';

/**
 * Upstream chat-completions chunks -> stream deltas (first choice only).
 * `data: [DONE]` ends the turn; a chunk with an `error` member is an error.
 */
export class ChatStreamDecoder implements StreamDecoder {
  private started = false;
  private ended = false;
  /** Upstream tool_calls[].index -> our 0-based tool number. */
  private readonly tools = new Map<number, number>();

  push(data: string): StreamDelta[] {
    if (this.ended) return [];
    if (data.trim() === '[DONE]') {
      this.ended = true;
      return [{ type: 'done' }];
    }
    const chunk = tryParse(data) as ChatChunk | undefined;
    if (!chunk || typeof chunk !== 'object') return [];
    if (chunk.error !== undefined) return [{ type: 'error', error: chunk }];
    const out: StreamDelta[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: chunk.id, model: chunk.model });
    }
    const choice = (chunk.choices ?? []).find((c) => (c.index ?? 0) === 0);
    if (choice) {
      const d = choice.delta ?? {};
      if (typeof d.content === 'string' && d.content !== '') out.push({ type: 'text', text: d.content });
      for (const call of d.tool_calls ?? []) {
        const key = call.index ?? 0;
        let index = this.tools.get(key);
        if (index === undefined) {
          index = this.tools.size;
          this.tools.set(key, index);
          out.push({ type: 'tool_start', index, id: call.id ?? newId('call_'), name: call.function?.name ?? '' });
        }
        const args = call.function?.arguments;
        if (args) out.push({ type: 'tool_args', index, args });
      }
      if (choice.finish_reason) out.push({ type: 'finish', reason: CHAT_FINISH_IN[choice.finish_reason] ?? 'stop' });
    }
    const usage = chunk.usage == null ? undefined : chatUsage(chunk.usage);
    if (usage) out.push({ type: 'usage', usage });
    return out;
  }
}
