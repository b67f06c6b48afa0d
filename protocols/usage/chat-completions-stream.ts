import type { SseEvent } from '../types';
import { hasNonNull, parseData, textLength, type UsageAccumulator } from './accumulator';
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

/** Raw text of unparsed chunks kept per stream before they are counted at once (bounds the memory of a long stream). */
const DEFERRED_MAX_CHARS = 64 * 1024;

/**
 * chat-completions stream: complete on `[DONE]` or a chunk with a finish_reason (spec 1 section 6).
 *
 * Only what can change the bill is parsed as it arrives: a chunk that has a `usage` or a
 * `finish_reason` that is not null (or any `\u` escape, which could spell either). Every other
 * chunk (the content deltas, typically all but two) only adds generated characters, which
 * matter only when the upstream's usage is missing, zero or implausibly low for the output
 * (domain/usage-estimate.ts) or the turn was interrupted: those chunks are kept as text and
 * parsed only when `outputChars` is read. `outputCharsAtMost` (their text length, an upper
 * bound on the characters in them) lets the billing skip that in the normal case.
 */
export class ChatCompletionsUsageAccumulator implements UsageAccumulator {
  usage: NormalizedUsage | undefined;
  completed = false;
  private counted = 0;
  private deferred: string[] = [];
  private deferredChars = 0;

  push(event: SseEvent): void {
    const data = event.data;
    if (data.includes('[DONE]') && data.trim() === '[DONE]') {
      this.completed = true;
      return;
    }
    if (hasNonNull(data, 'usage') || hasNonNull(data, 'finish_reason') || data.includes('\\u')) {
      this.take(parseData(data));
      return;
    }
    this.deferred.push(data);
    this.deferredChars += data.length;
    if (this.deferredChars > DEFERRED_MAX_CHARS) this.countDeferred();
  }

  /** Characters of generated output so far (exact: counts every chunk still kept as text). */
  get outputChars(): number {
    if (this.deferred.length > 0) this.countDeferred();
    return this.counted;
  }

  /** At least `outputChars`, without parsing anything: a string's characters never outnumber its JSON text. */
  get outputCharsAtMost(): number {
    return this.counted + this.deferredChars;
  }

  private countDeferred(): void {
    const pending = this.deferred;
    this.deferred = [];
    this.deferredChars = 0;
    for (const data of pending) this.take(parseData(data));
  }

  private take(chunk: Record<string, unknown> | undefined): void {
    if (!chunk) return;
    if (chunk.usage != null) this.usage = chatUsage(chunk.usage) ?? this.usage;
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as ChunkChoice[]) : [];
    for (const c of choices) {
      const d = c?.delta;
      if (d) {
        this.counted += textLength(d.content) + textLength(d.reasoning_content) + textLength(d.refusal);
        if (Array.isArray(d.tool_calls)) for (const t of d.tool_calls) this.counted += textLength(t?.function?.name) + textLength(t?.function?.arguments);
      }
      if (c?.finish_reason) this.completed = true;
    }
  }
}
