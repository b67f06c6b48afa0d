import { asRecord, count, type NormalizedUsage } from './normalized';

/**
 * responses `usage`: input_tokens includes input_tokens_details.cached_tokens,
 * output_tokens includes output_tokens_details.reasoning_tokens.
 */
export function responsesUsage(usage: unknown): NormalizedUsage | undefined {
  const u = asRecord(usage);
  if (!u) return undefined;
  return {
    inputTokens: count(u.input_tokens),
    outputTokens: count(u.output_tokens),
    cachedTokens: count(asRecord(u.input_tokens_details)?.cached_tokens),
    cacheWriteTokens: 0,
    reasoningTokens: count(asRecord(u.output_tokens_details)?.reasoning_tokens),
    serverToolCalls: count(u.num_server_side_tools_used),
  };
}
