import type { SseEvent } from '../types';

export interface TranslateRequestOptions {
  /** The model id for the upstream body (generate-content clients carry it in the path). */
  model?: string;
  /** Streaming wanted (generate-content clients choose it by path). */
  stream?: boolean;
  /** `max_tokens` for a messages upstream when the client sent no output cap. */
  defaultMaxTokens?: number;
}

export interface TranslatedRequest {
  body: Record<string, unknown>;
  /** Client request fields the upstream cannot carry, for X-Protocol-Warning (joined by "; "). */
  dropped: string[];
}

export interface TranslateResponseOptions {
  /** Model id to show the client (defaults to what the upstream reported). */
  model?: string;
  /** Unix seconds for chat `created` when the upstream gives none. */
  created?: number;
}

export interface TranslateStreamOptions extends TranslateResponseOptions {
  /** chat-completions clients: `stream_options.include_usage` was true. */
  includeUsage?: boolean;
}

export interface StreamStep {
  /** Client SSE frames to write, in order. */
  frames: string[];
  /** An upstream in-stream error frame (parsed), for the caller to decide on; nothing was written for it. */
  error?: unknown;
  /** The client stream is complete (terminal frames are in `frames`). */
  done: boolean;
}

/** Stateful: feed it the upstream's parsed SSE events one by one. */
export interface StreamTranslator {
  push(event: SseEvent): StreamStep;
  /** The upstream body ended; closing frames if the turn had finished without its terminal event. */
  end(): string[];
}

export interface Translator<ClientRequest> {
  /** `X-Protocol-Translation` value: `{client}_to_{upstream}`. */
  readonly name: string;
  request(body: ClientRequest, opts?: TranslateRequestOptions): TranslatedRequest;
  response(upstreamJson: unknown, opts?: TranslateResponseOptions): Record<string, unknown>;
  stream(opts?: TranslateStreamOptions): StreamTranslator;
}
