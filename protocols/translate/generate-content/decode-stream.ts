import type { StreamDecoder, StreamDelta } from '../../canonical/stream';
import type { GenerateContentResponse } from '../../generate-content/wire';
import { generateContentUsage } from '../../usage/generate-content';
import type { NormalizedUsage } from '../../usage/normalized';
import { newId } from '../ids';
import { tryParse } from '../json';
import { geminiFinishIn } from './decode-response';

/**
 * Upstream streamGenerateContent (`alt=sse`) chunks -> stream deltas, first
 * candidate only. Each chunk is a GenerateContentResponse; a function call
 * arrives whole in one part; the chunk carrying finishReason ends the turn
 * (its usageMetadata is the final count).
 */
export class GenerateContentStreamDecoder implements StreamDecoder {
  private started = false;
  private ended = false;
  private tools = 0;
  private usage: NormalizedUsage | undefined;

  push(data: string): StreamDelta[] {
    if (this.ended) return [];
    const chunk = tryParse(data) as GenerateContentResponse | undefined;
    if (!chunk || typeof chunk !== 'object') return [];
    if (chunk.error !== undefined) return [{ type: 'error', error: chunk }];
    const out: StreamDelta[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: chunk.responseId, model: chunk.modelVersion });
    }
    const candidate = (chunk.candidates ?? []).find((c) => (c.index ?? 0) === 0);
    for (const p of candidate?.content?.parts ?? []) {
      if (typeof p.text === 'string' && p.text !== '' && !p.thought) out.push({ type: 'text', text: p.text });
      if (p.functionCall) {
        const index = this.tools++;
        out.push({ type: 'tool_start', index, id: p.functionCall.id ?? newId('call_'), name: p.functionCall.name ?? '' });
        out.push({ type: 'tool_args', index, args: JSON.stringify(p.functionCall.args ?? {}) });
      }
    }
    const usage = generateContentUsage(chunk.usageMetadata);
    if (usage) this.usage = usage;
    const blocked = !candidate && chunk.promptFeedback?.blockReason !== undefined;
    if (candidate?.finishReason || blocked) {
      this.ended = true;
      const reason = blocked ? 'content_filter' : geminiFinishIn(candidate?.finishReason, this.tools > 0);
      out.push({ type: 'finish', reason });
      if (this.usage) out.push({ type: 'usage', usage: this.usage });
      out.push({ type: 'done' });
    }
    return out;
  }
}
