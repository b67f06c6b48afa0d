import { DeltaEncoder, type ContentDelta } from '../delta-encoder';
import { SSE_DONE } from '../../sse';
import { newId, unixNow } from '../ids';
import { CHAT_FINISH_OUT, chatUsageOut } from './encode-response';

export interface ChatStreamOptions {
  /** The client asked `stream_options: {include_usage: true}`: send the trailing usage chunk. */
  includeUsage?: boolean;
  model?: string;
  created?: number;
}

/**
 * Stream deltas -> chat.completion.chunk frames: a role chunk first, content
 * and tool-call deltas, a finish chunk, then (when asked) a usage chunk with
 * empty choices, then `data: [DONE]`. With include_usage every other chunk
 * carries `usage: null`, as the vendor does.
 */
export class ChatStreamEncoder extends DeltaEncoder {
  private readonly created: number;
  private started = false;

  constructor(private readonly opts: ChatStreamOptions = {}) {
    super(opts.model);
    this.created = opts.created ?? unixNow();
  }

  protected onStart(): string[] {
    return this.begin();
  }

  protected onContent(delta: ContentDelta): string[] {
    switch (delta.type) {
      case 'text':
        return [...this.begin(), this.chunk({ content: delta.text })];
      case 'tool_start':
        return [
          ...this.begin(),
          this.chunk({
            tool_calls: [{ index: delta.index, id: delta.id, type: 'function', function: { name: delta.name, arguments: '' } }],
          }),
        ];
      case 'tool_args':
        return [...this.begin(), this.chunk({ tool_calls: [{ index: delta.index, function: { arguments: delta.args } }] })];
      case 'finish':
        if (this.finish) return [];
        this.finish = delta.reason;
        return [...this.begin(), this.chunk({}, CHAT_FINISH_OUT[delta.reason])];
    }
  }

  private begin(): string[] {
    if (this.started) return [];
    this.started = true;
    return [this.chunk({ role: 'assistant', content: '' })];
  }

  protected close(): string[] {
    const out = this.begin();
    if (this.opts.includeUsage && this.usage) out.push(this.frame([], chatUsageOut(this.usage)));
    out.push(SSE_DONE);
    this.done = true;
    return out;
  }

  private chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return this.frame([{ index: 0, delta, logprobs: null, finish_reason: finish }], null);
  }

  private frame(choices: unknown[], usage: unknown): string {
    this.id ??= newId('chatcmpl-');
    const chunk: Record<string, unknown> = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model ?? '',
      choices,
    };
    if (this.opts.includeUsage) chunk.usage = usage;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
}
