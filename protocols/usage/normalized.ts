/** Token usage of one turn in billing terms, whatever the protocol. */
export interface NormalizedUsage {
  /** The whole prompt: uncached input + cache reads + cache writes. */
  inputTokens: number;
  /** All generated tokens, reasoning included. */
  outputTokens: number;
  /** Prompt tokens served from the cache (charged at the cached price). */
  cachedTokens: number;
  /** Prompt tokens written into the cache (charged at input x 1.25 for one family). */
  cacheWriteTokens: number;
  /** Part of outputTokens spent on reasoning. */
  reasoningTokens: number;
  /** Server-side tool calls (`usage.num_server_side_tools_used`, web searches). */
  serverToolCalls: number;
}

export const ZERO_USAGE: Readonly<NormalizedUsage> = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  serverToolCalls: 0,
});

/** A non-negative integer from an upstream field, 0 when absent or malformed. */
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
