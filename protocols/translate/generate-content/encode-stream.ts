import { DeltaEncoder, type ContentDelta } from '../delta-encoder';
import { formatSse } from '../../sse';
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
export class GenerateContentStreamEncoder extends DeltaEncoder {
  private readonly calls = new Map<number, { name: string; args: string }>();

  constructor(opts: { model?: string } = {}) {
    super(opts.model);
  }

  protected onStart(): string[] {
    return [];
  }

  protected onContent(delta: ContentDelta): string[] {
    switch (delta.type) {
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
    }
  }

  protected close(): string[] {
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
