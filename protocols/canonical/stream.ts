import type { NormalizedUsage } from '../usage/normalized';
import type { FinishReason } from './response';

/**
 * One step of a streamed turn, protocol-neutral. Upstream stream decoders
 * turn wire events into these; client stream encoders turn these into
 * frames. Tool calls are numbered 0, 1, ... in the order they start.
 */
export type StreamDelta =
  | { type: 'start'; id?: string; model?: string }
  | { type: 'text'; text: string }
  | { type: 'tool_start'; index: number; id: string; name: string }
  | { type: 'tool_args'; index: number; args: string }
  | { type: 'finish'; reason: FinishReason; stopSequence?: string | null }
  | { type: 'usage'; usage: NormalizedUsage }
  /** The upstream ended the turn properly ([DONE], message_stop, final chunk). */
  | { type: 'done' }
  /** An in-stream error frame from the upstream, parsed. */
  | { type: 'error'; error: unknown };

export interface StreamDecoder {
  push(data: string, event?: string): StreamDelta[];
}

/** Turns stream deltas into the client protocol's SSE frames. */
export interface StreamEncoder {
  push(delta: StreamDelta): string[];
  /** The closing frames were written. */
  readonly done: boolean;
  /** The upstream body ended: close properly if the turn had finished, else write nothing. */
  end(): string[];
}
