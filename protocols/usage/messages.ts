import { asRecord, count, type NormalizedUsage } from './normalized';

/**
 * messages `usage`: input_tokens excludes the cache, so the whole prompt is
 * input + cache_read_input_tokens + cache_creation_input_tokens.
 * server_tool_use counts the vendor-run tools (web search, web fetch).
 */
export function messagesUsage(usage: unknown): NormalizedUsage | undefined {
  const u = asRecord(usage);
  if (!u) return undefined;
  const cacheRead = count(u.cache_read_input_tokens);
  const cacheWrite = count(u.cache_creation_input_tokens);
  return {
    inputTokens: count(u.input_tokens) + cacheRead + cacheWrite,
    outputTokens: count(u.output_tokens),
    cachedTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    reasoningTokens: count(asRecord(u.output_tokens_details)?.thinking_tokens),
    serverToolCalls: serverToolUse(u.server_tool_use),
  };
}

function serverToolUse(value: unknown): number {
  const s = asRecord(value);
  if (!s) return 0;
  let n = 0;
  for (const key in s) if (key.endsWith('_requests')) n += count(s[key]);
  return n;
}
