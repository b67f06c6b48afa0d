import type { SseEvent } from '../types';
import { parseData, textLength, type UsageAccumulator } from './accumulator';
import { messagesUsage } from './messages';
import type { NormalizedUsage } from './normalized';

/**
 * messages stream: usage starts in message_start and each message_delta
 * updates it (counts are cumulative, later values win); complete on message_stop.
 */
export class MessagesUsageAccumulator implements UsageAccumulator {
  private raw: Record<string, unknown> | undefined;
  usage: NormalizedUsage | undefined;
  outputChars = 0;
  completed = false;

  push(event: SseEvent): void {
    const e = parseData(event.data);
    if (!e) return;
    switch (e.type ?? event.event) {
      case 'message_start': {
        const message = e.message as { usage?: Record<string, unknown> } | undefined;
        this.raw = { ...message?.usage };
        this.usage = messagesUsage(this.raw);
        break;
      }
      case 'message_delta': {
        this.raw ??= {};
        const usage = (e.usage ?? {}) as Record<string, unknown>;
        for (const k in usage) if (usage[k] != null) this.raw[k] = usage[k];
        this.usage = messagesUsage(this.raw);
        break;
      }
      case 'content_block_start': {
        const b = e.content_block as { text?: unknown; name?: unknown; thinking?: unknown } | undefined;
        this.outputChars += textLength(b?.text) + textLength(b?.name) + textLength(b?.thinking);
        break;
      }
      case 'content_block_delta': {
        const d = e.delta as { text?: unknown; partial_json?: unknown; thinking?: unknown } | undefined;
        this.outputChars += textLength(d?.text) + textLength(d?.partial_json) + textLength(d?.thinking);
        break;
      }
      case 'message_stop':
        this.completed = true;
        break;
    }
  }
}
