import type { SseEvent } from '../types';
import { parseData, textLength, type UsageAccumulator } from './accumulator';
import { generateContentUsage } from './generate-content';
import type { NormalizedUsage } from './normalized';

interface Candidate {
  content?: { parts?: Array<{ text?: unknown; functionCall?: unknown }> };
  finishReason?: unknown;
}

/**
 * generate-content stream: every chunk may carry usageMetadata (running
 * totals, the last one wins); complete when a candidate has a finishReason.
 */
export class GenerateContentUsageAccumulator implements UsageAccumulator {
  usage: NormalizedUsage | undefined;
  outputChars = 0;
  completed = false;

  push(event: SseEvent): void {
    const chunk = parseData(event.data);
    if (!chunk) return;
    if (chunk.usageMetadata != null) this.usage = generateContentUsage(chunk.usageMetadata) ?? this.usage;
    const candidates = Array.isArray(chunk.candidates) ? (chunk.candidates as Candidate[]) : [];
    for (const c of candidates) {
      for (const p of c.content?.parts ?? []) {
        this.outputChars += textLength(p.text);
        if (p.functionCall !== undefined) this.outputChars += JSON.stringify(p.functionCall).length;
      }
      if (c.finishReason) this.completed = true;
    }
  }
}
