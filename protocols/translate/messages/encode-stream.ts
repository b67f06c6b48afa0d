import { DeltaEncoder, type ContentDelta } from '../delta-encoder';
import { formatSse } from '../../sse';
import { ZERO_USAGE } from '../../usage/normalized';
import { newId } from '../ids';
import { MESSAGES_FINISH_OUT, messagesUsageOut } from './encode-response';

/**
 * Stream deltas -> messages events (`event: X\ndata: {...}\n\n`):
 * message_start, then per content block content_block_start / _delta /
 * _stop, then message_delta (stop_reason, cumulative usage) and
 * message_stop. Input tokens are known only at the end of an upstream
 * chat or Gemini stream, so they are sent in message_delta's usage.
 */
export class MessagesStreamEncoder extends DeltaEncoder {
  private started = false;
  private open: { index: number; kind: 'text' | 'tool' } | undefined;
  private nextBlock = 0;
  private readonly toolBlocks = new Map<number, number>();
  private stopSequence: string | null = null;

  constructor(opts: { model?: string } = {}) {
    super(opts.model);
  }

  protected onStart(): string[] {
    return this.begin();
  }

  protected onContent(delta: ContentDelta): string[] {
    switch (delta.type) {
      case 'text': {
        const out = this.begin();
        if (this.open?.kind !== 'text') {
          out.push(...this.closeBlock());
          out.push(this.openBlock('text', { type: 'text', text: '' }));
        }
        out.push(this.event('content_block_delta', { index: this.open!.index, delta: { type: 'text_delta', text: delta.text } }));
        return out;
      }
      case 'tool_start': {
        const out = [...this.begin(), ...this.closeBlock()];
        out.push(this.openBlock('tool', { type: 'tool_use', id: delta.id, name: delta.name, input: {} }));
        this.toolBlocks.set(delta.index, this.open!.index);
        return out;
      }
      case 'tool_args': {
        const index = this.toolBlocks.get(delta.index);
        if (index === undefined) return [];
        return [this.event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: delta.args } })];
      }
      case 'finish':
        this.finish = delta.reason;
        this.stopSequence = delta.stopSequence ?? null;
        return this.closeBlock();
    }
  }

  private begin(): string[] {
    if (this.started) return [];
    this.started = true;
    this.id ??= newId('msg_');
    return [
      this.event('message_start', {
        message: {
          id: this.id,
          type: 'message',
          role: 'assistant',
          model: this.model ?? '',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      }),
    ];
  }

  private openBlock(kind: 'text' | 'tool', block: Record<string, unknown>): string {
    this.open = { index: this.nextBlock++, kind };
    return this.event('content_block_start', { index: this.open.index, content_block: block });
  }

  private closeBlock(): string[] {
    if (!this.open) return [];
    const index = this.open.index;
    this.open = undefined;
    return [this.event('content_block_stop', { index })];
  }

  protected close(): string[] {
    const out = [...this.begin(), ...this.closeBlock()];
    const finish = this.finish ?? 'stop';
    out.push(
      this.event('message_delta', {
        delta: {
          stop_reason: MESSAGES_FINISH_OUT[finish],
          stop_sequence: finish === 'stop_sequence' ? this.stopSequence : null,
        },
        usage: messagesUsageOut(this.usage ?? ZERO_USAGE),
      }),
    );
    out.push(this.event('message_stop', {}));
    this.done = true;
    return out;
  }

  private event(type: string, data: Record<string, unknown>): string {
    return formatSse(JSON.stringify({ type, ...data }), type);
  }
}
