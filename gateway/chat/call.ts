import type { Channel, Model } from '../../domain/catalogue';
import type { TokenUsage } from '../../domain/pricing';
import type { Protocol } from '../../protocols/types';

/**
 * One chat call as the pipeline (gateway/chat/pipeline.ts) and the stream
 * relay (gateway/chat/stream-relay.ts) see it: the client's protocol and
 * body, the model and its channels, and what the bill is estimated on.
 */
export interface ChatCall {
  client: Protocol;
  model: Model;
  /** The client body, validated; forwarded as is on native channels. */
  body: Record<string, unknown>;
  raw: Buffer;
  stream: boolean;
  /** Client asked for usage in the stream (chat-completions stream_options.include_usage). */
  includeUsage: boolean;
  maxTokens: number | undefined;
  /** What the pre-charge input estimate is measured on (messages, contents, input...). */
  promptForEstimate: unknown;
  /**
   * Bytes of `promptForEstimate` as JSON (spec 1 section 8: the pre-charge input estimate): the
   * length of its value in the raw body, measured by jsonBody; when the prompt is not the client's
   * (an agent's prelude), measured once by serialising it.
   */
  promptBytes?: number;
  channels: Channel[];
  /** chat-completions built-in tool path: a mid-stream failure injects an error chunk. */
  builtinToolPath: boolean;
  /** generate-content `:streamGenerateContent` without `alt=sse`: the client wants a JSON array stream. */
  jsonArrayStream?: boolean;
}

/** Why a chat request's upstream call was stopped (set by the close listeners and the deadline). */
export interface StopReason {
  /** The client closed its connection. */
  client: boolean;
  /** The request's deadline (CHAT_UPSTREAM_TIMEOUT_MS, streaming included) passed. */
  deadline: boolean;
}

/** The prompt's size as JSON, measured once (the pre-charge estimate and the estimate of an interrupted turn). */
export function promptBytes(call: ChatCall): number {
  return (call.promptBytes ??= Buffer.byteLength(JSON.stringify(call.promptForEstimate ?? '')));
}

/** The usage a protocol parser reported, as the pricing takes it (null: none reported). */
export function toTokenUsage(u: { inputTokens: number; outputTokens: number; cachedTokens: number; cacheWriteTokens: number; serverToolCalls: number } | undefined): TokenUsage | null {
  if (!u) return null;
  return {
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    cachedTokens: u.cachedTokens,
    cacheWriteTokens: u.cacheWriteTokens,
    serverToolCalls: u.serverToolCalls,
  };
}
