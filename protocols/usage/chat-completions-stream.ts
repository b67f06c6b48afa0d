import type { SseEvent } from '../types';
import { parseData, textLength, type UsageAccumulator } from './accumulator';
import { chatUsage } from './chat-completions';
import type { NormalizedUsage } from './normalized';

interface ChunkChoice {
  delta?: {
    content?: unknown;
    reasoning_content?: unknown;
    refusal?: unknown;
    tool_calls?: Array<{ function?: { name?: unknown; arguments?: unknown } }>;
  };
  finish_reason?: unknown;
}

/** chat-completions stream: complete on `[DONE]` or a chunk with a finish_reason (spec 1 section 6). */
export class ChatCompletionsUsageAccumulator implements UsageAccumulator {
  usage: NormalizedUsage | undefined;
  outputChars = 0;
  completed = false;

  push(event: SseEvent): void {
    if (event.data.trim() === '[DONE]') {
      this.completed = true;
      return;
    }
    const chunk = parseData(event.data);
    if (!chunk) return;
    if (chunk.usage != null) this.usage = chatUsage(chunk.usage) ?? this.usage;
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as ChunkChoice[]) : [];
    for (const c of choices) {
      const d = c.delta;
      if (d) {
        this.outputChars += textLength(d.content) + textLength(d.reasoning_content) + textLength(d.refusal);
        for (const t of d.tool_calls ?? []) this.outputChars += textLength(t.function?.name) + textLength(t.function?.arguments);
      }
      if (c.finish_reason) this.completed = true;
    }
  }
}
