import type { SseEvent } from '../types';
import { DeferredChars, hasNonNull, memberNames, parseData, textLength, type UsageAccumulator } from './accumulator';
import { generateContentUsage } from './generate-content';
import type { NormalizedUsage } from './normalized';

interface Candidate {
  content?: { parts?: Array<{ text?: unknown; functionCall?: unknown }> };
  finishReason?: unknown;
}

const candidatesOf = (chunk: Record<string, unknown>): Candidate[] => (Array.isArray(chunk.candidates) ? (chunk.candidates as Candidate[]) : []);

/** Generated characters of a chunk: its parts' text, and each function call as JSON. */
function partChars(chunk: Record<string, unknown>): number {
  let n = 0;
  for (const c of candidatesOf(chunk)) {
    const parts = c?.content?.parts;
    if (!Array.isArray(parts)) continue;
    for (const p of parts) {
      n += textLength(p?.text);
      if (p?.functionCall !== undefined) n += JSON.stringify(p.functionCall).length;
    }
  }
  return n;
}

/** The member a deferred chunk's characters are counted in. */
const PART_TEXT = memberNames('text');

/**
 * generate-content stream: every chunk may carry usageMetadata (running
 * totals, the last one wins); complete when a candidate has a finishReason.
 *
 * A chunk is parsed on arrival when it may change the bill or the end: it
 * holds `usageMetadata`, a `finishReason` that is not null, a `functionCall`
 * (counted as re-serialised JSON, which can outgrow its text) or any `\u`
 * escape. Every other chunk only adds its parts' text and is kept as text
 * until the characters are read.
 */
export class GenerateContentUsageAccumulator implements UsageAccumulator {
  usage: NormalizedUsage | undefined;
  completed = false;
  // A deferred chunk has no functionCall (those are parsed on arrival): only its parts' text counts.
  private readonly chars = new DeferredChars((event) => {
    const chunk = parseData(event.data);
    return chunk ? partChars(chunk) : 0;
  }, PART_TEXT);

  get outputChars(): number {
    return this.chars.total;
  }

  get outputCharsAtMost(): number {
    return this.chars.atMost;
  }

  push(event: SseEvent): void {
    const data = event.data;
    if (!data.includes('usageMetadata') && !hasNonNull(data, 'finishReason') && !data.includes('functionCall') && !data.includes('\\u')) {
      this.chars.add(event);
      return;
    }
    const chunk = parseData(data);
    if (!chunk) return;
    if (chunk.usageMetadata != null) this.usage = generateContentUsage(chunk.usageMetadata) ?? this.usage;
    this.chars.addCounted(partChars(chunk));
    for (const c of candidatesOf(chunk)) if (c?.finishReason) this.completed = true;
  }
}
