import type { FinishReason } from '../canonical/response';
import type { StreamDelta, StreamEncoder } from '../canonical/stream';
import type { NormalizedUsage } from '../usage/normalized';

/** The deltas a client encoder writes its own way. */
export type ContentDelta = Extract<StreamDelta, { type: 'text' | 'tool_start' | 'tool_args' | 'finish' }>;

/**
 * What every client stream encoder shares: nothing after its closing frames,
 * the upstream's id and model kept from `start`, usage kept for the end,
 * `done` closes, and `end()` closes a turn that finished without `done`.
 */
export abstract class DeltaEncoder implements StreamEncoder {
  protected id: string | undefined;
  protected model: string | undefined;
  protected finish: FinishReason | undefined;
  protected usage: NormalizedUsage | undefined;
  done = false;

  constructor(model?: string) {
    this.model = model;
  }

  push(delta: StreamDelta): string[] {
    if (this.done) return [];
    switch (delta.type) {
      case 'start':
        this.id ??= delta.id;
        this.model ??= delta.model;
        return this.onStart();
      case 'usage':
        this.usage = delta.usage;
        return [];
      case 'done':
        return this.close();
      case 'error':
        return [];
      default:
        return this.onContent(delta);
    }
  }

  end(): string[] {
    return this.finish && !this.done ? this.close() : [];
  }

  /** Frames when the upstream turn starts. */
  protected abstract onStart(): string[];
  protected abstract onContent(delta: ContentDelta): string[];
  /** The closing frames; sets `done`. */
  protected abstract close(): string[];
}
