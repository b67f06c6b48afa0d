import type { SseEvent } from '../types';
import { DeferredChars, hasNonNull, memberNames, parseData, textLength, type UsageAccumulator } from './accumulator';
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

/** Generated characters of a chunk's deltas (text, reasoning, refusal, tool names and arguments). */
function deltaChars(chunk: Record<string, unknown> | undefined): number {
  let n = 0;
  const choices = chunk && Array.isArray(chunk.choices) ? (chunk.choices as ChunkChoice[]) : [];
  for (const c of choices) {
    const d = c?.delta;
    if (!d) continue;
    n += textLength(d.content) + textLength(d.reasoning_content) + textLength(d.refusal);
    if (Array.isArray(d.tool_calls)) for (const t of d.tool_calls) n += textLength(t?.function?.name) + textLength(t?.function?.arguments);
  }
  return n;
}

/** The members `deltaChars` counts (at any depth: a bound). */
const DELTA_MEMBERS = memberNames('content', 'reasoning_content', 'refusal', 'name', 'arguments');

/**
 * chat-completions stream: complete on `[DONE]` or a chunk with a finish_reason (spec 1 section 6).
 *
 * Only what can change the bill is parsed as it arrives: a chunk that has a `usage` or a
 * `finish_reason` that is not null (or any `\u` escape, which could spell either). Every other
 * chunk (the content deltas, typically all but two) only adds generated characters, which
 * matter only when the upstream's usage is missing, zero or implausibly low for the output
 * (domain/usage-estimate.ts) or the turn was interrupted: those chunks are kept as text and
 * parsed only when `outputChars` is read. `outputCharsAtMost` (the characters of their strings
 * under those member names, read off the text: ./accumulator.ts `stringValueChars`) lets the
 * billing skip that in the normal case.
 */
export class ChatCompletionsUsageAccumulator implements UsageAccumulator {
  usage: NormalizedUsage | undefined;
  completed = false;
  private readonly chars = new DeferredChars((event) => deltaChars(parseData(event.data)), DELTA_MEMBERS);

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
    this.chars.add(event);
  }

  /** Characters of generated output so far (exact: counts every chunk still kept as text). */
  get outputChars(): number {
    return this.chars.total;
  }

  /** At least `outputChars`, without parsing anything. */
  get outputCharsAtMost(): number {
    return this.chars.atMost;
  }

  private take(chunk: Record<string, unknown> | undefined): void {
    if (!chunk) return;
    if (chunk.usage != null) this.usage = chatUsage(chunk.usage) ?? this.usage;
    this.chars.addCounted(deltaChars(chunk));
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as ChunkChoice[]) : [];
    for (const c of choices) if (c?.finish_reason) this.completed = true;
  }
}
