import type { SseEvent } from '../types';
import { DeferredChars, memberNames, parseData, textLength, type UsageAccumulator } from './accumulator';
import { messagesUsage } from './messages';
import type { NormalizedUsage } from './normalized';

/** Generated characters of a content event (content_block_start or _delta; 0 for any other). */
function contentChars(e: Record<string, unknown>, event: SseEvent): number {
  switch (e.type ?? event.event) {
    case 'content_block_start': {
      const b = e.content_block as { text?: unknown; name?: unknown; thinking?: unknown } | undefined;
      return textLength(b?.text) + textLength(b?.name) + textLength(b?.thinking);
    }
    case 'content_block_delta': {
      const d = e.delta as { text?: unknown; partial_json?: unknown; thinking?: unknown } | undefined;
      return textLength(d?.text) + textLength(d?.partial_json) + textLength(d?.thinking);
    }
    default:
      return 0;
  }
}

/** The members `contentChars` counts (at any depth: a bound). */
const CONTENT_MEMBERS = memberNames('text', 'name', 'thinking', 'partial_json');

/**
 * messages stream: usage starts in message_start and each message_delta
 * updates it (counts are cumulative, later values win); complete on message_stop.
 *
 * Only an event that may be one of those three is parsed on arrival: its data
 * or its event name holds `message_` (JSON cannot spell the type without those
 * letters, except with a `\u` escape, which also parses it). Every other event
 * (the content blocks, ping) only adds generated characters and is kept as
 * text until they are read (see ./chat-completions-stream.ts).
 */
export class MessagesUsageAccumulator implements UsageAccumulator {
  private raw: Record<string, unknown> | undefined;
  usage: NormalizedUsage | undefined;
  completed = false;
  private readonly chars = new DeferredChars((event) => {
    const e = parseData(event.data);
    return e ? contentChars(e, event) : 0;
  }, CONTENT_MEMBERS);

  get outputChars(): number {
    return this.chars.total;
  }

  get outputCharsAtMost(): number {
    return this.chars.atMost;
  }

  push(event: SseEvent): void {
    const data = event.data;
    if (!data.includes('message_') && !data.includes('\\u') && !event.event?.includes('message_')) {
      this.chars.add(event);
      return;
    }
    const e = parseData(data);
    if (!e) return;
    switch (e.type ?? event.event) {
      case 'message_start': {
        const message = e.message as { usage?: Record<string, unknown> } | undefined;
        this.raw = Object.assign({}, message?.usage); // not a spread: members are added below (gateway/chat/pipeline.ts `prepare`)
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
      case 'message_stop':
        this.completed = true;
        break;
      default:
        this.chars.addCounted(contentChars(e, event));
    }
  }
}
