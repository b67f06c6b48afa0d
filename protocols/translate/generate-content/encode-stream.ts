import type { FinishReason } from '../../canonical/response';
import type { StreamDelta, StreamEncoder } from '../../canonical/stream';
import { formatSse } from '../../sse';
import type { NormalizedUsage } from '../../usage/normalized';
import { newId } from '../ids';
import { parseInput } from '../json-args';
import { GEMINI_FINISH_OUT, geminiUsageOut } from './encode-response';

/**
 * Stream deltas -> streamGenerateContent `alt=sse` frames, each a
 * GenerateContentResponse. Text is sent as it comes; function calls arrive
 * whole in Gemini, so their argument fragments are held and sent as
 * functionCall parts in the final chunk, which also carries finishReason
 * and usageMetadata. Gemini has no terminator frame: the body just ends.
 */
export class GenerateContentStreamEncoder implements StreamEncoder {
  private id: string | undefined;
  private model: string | undefined;
  private readonly calls = new Map<number, { name: string; args: string }>();
  private finish: FinishReason | undefined;
  private usage: NormalizedUsage | undefined;
  done = false;

  constructor(opts: { model?: string } = {}) {
    this.model = opts.model;
  }

  push(delta: StreamDelta): string[] {
    if (this.done) return [];
    switch (delta.type) {
      case 'start':
        this.id ??= delta.id;
        this.model ??= delta.model;
        return [];
      case 'text':
        return [this.frame([{ text: delta.text }])];
      case 'tool_start':
        this.calls.set(delta.index, { name: delta.name, args: '' });
        return [];
      case 'tool_args': {
        const call = this.calls.get(delta.index);
        if (call) call.args += delta.args;
        return [];
      }
      case 'finish':
        this.finish = delta.reason;
        return [];
      case 'usage':
        this.usage = delta.usage;
        return [];
      case 'done':
        return this.close();
      default:
        return [];
    }
  }

  end(): string[] {
    return this.finish && !this.done ? this.close() : [];
  }

  private close(): string[] {
    this.done = true;
    const parts = [...this.calls.values()].map((c) => ({ functionCall: { name: c.name, args: parseInput(c.args) } }));
    return [this.frame(parts.length > 0 ? parts : [{ text: '' }], GEMINI_FINISH_OUT[this.finish ?? 'stop'], true)];
  }

  private frame(parts: unknown[], finishReason?: string, last = false): string {
    this.id ??= newId('');
    const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
    if (finishReason) candidate.finishReason = finishReason;
    const chunk: Record<string, unknown> = { candidates: [candidate] };
    if (last && this.usage) chunk.usageMetadata = geminiUsageOut(this.usage);
    chunk.modelVersion = this.model ?? '';
    chunk.responseId = this.id;
    return formatSse(chunk);
  }
}
