import type { StreamDecoder, StreamDelta } from '../../canonical/stream';
import type { MessagesStreamEvent } from '../../messages/wire';
import { messagesUsage } from '../../usage/messages';
import { newId } from '../ids';
import { tryParse } from '../json';
import { MESSAGES_FINISH_IN } from './decode-response';

/**
 * Upstream messages events -> stream deltas. Usage is the message_start
 * usage updated by each message_delta (whose counts are cumulative).
 * Thinking and server-tool blocks are not part of the answer and are skipped.
 */
export class MessagesStreamDecoder implements StreamDecoder {
  /** Content block index -> our tool number, and whether it got any input JSON. */
  private readonly tools = new Map<number, { index: number; args: boolean }>();
  private usage: Record<string, unknown> = {};
  private ended = false;

  push(data: string): StreamDelta[] {
    if (this.ended) return [];
    const e = tryParse(data) as MessagesStreamEvent | undefined;
    if (!e || typeof e !== 'object') return [];
    switch (e.type) {
      case 'message_start': {
        this.usage = { ...(e.message?.usage as Record<string, unknown> | undefined) };
        return [{ type: 'start', id: e.message?.id, model: e.message?.model }];
      }
      case 'content_block_start': {
        const b = e.content_block ?? {};
        if (b.type === 'text' && b.text) return [{ type: 'text', text: b.text }];
        if (b.type === 'tool_use') {
          const index = this.tools.size;
          this.tools.set(e.index ?? 0, { index, args: false });
          return [{ type: 'tool_start', index, id: b.id ?? newId('toolu_'), name: b.name ?? '' }];
        }
        return [];
      }
      case 'content_block_delta': {
        const d = e.delta ?? {};
        if (d.type === 'text_delta' && d.text) return [{ type: 'text', text: d.text }];
        const tool = this.tools.get(e.index ?? 0);
        if (d.type === 'input_json_delta' && tool && d.partial_json) {
          tool.args = true;
          return [{ type: 'tool_args', index: tool.index, args: d.partial_json }];
        }
        return [];
      }
      case 'content_block_stop': {
        const tool = this.tools.get(e.index ?? 0);
        if (tool && !tool.args) {
          // A tool without parameters streams no input JSON: its arguments are `{}`.
          tool.args = true;
          return [{ type: 'tool_args', index: tool.index, args: '{}' }];
        }
        return [];
      }
      case 'message_delta': {
        for (const [k, v] of Object.entries(e.usage ?? {})) if (v != null) this.usage[k] = v;
        const out: StreamDelta[] = [];
        const reason = e.delta?.stop_reason;
        if (reason) out.push({ type: 'finish', reason: MESSAGES_FINISH_IN[reason] ?? 'stop', stopSequence: e.delta?.stop_sequence ?? null });
        const usage = messagesUsage(this.usage);
        if (usage) out.push({ type: 'usage', usage });
        return out;
      }
      case 'message_stop':
        this.ended = true;
        return [{ type: 'done' }];
      case 'error':
        return [{ type: 'error', error: e }];
      default:
        return [];
    }
  }
}
