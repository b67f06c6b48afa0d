import { asRecord, count, type NormalizedUsage } from './normalized';

/**
 * chat-completions `usage`: prompt_tokens already includes the cached part
 * (`prompt_tokens_details.cached_tokens`). Reasoning tokens are part of
 * completion_tokens at OpenAI; xAI reports them beside it (total_tokens =
 * prompt + completion + reasoning), so the output is taken as
 * max(completion, total - prompt). `num_server_side_tools_used` is xAI's.
 */
export function chatUsage(usage: unknown): NormalizedUsage | undefined {
  const u = asRecord(usage);
  if (!u) return undefined;
  const prompt = count(u.prompt_tokens);
  const completion = count(u.completion_tokens);
  const total = count(u.total_tokens);
  const promptDetails = asRecord(u.prompt_tokens_details);
  const completionDetails = asRecord(u.completion_tokens_details);
  return {
    inputTokens: prompt,
    outputTokens: Math.max(completion, total - prompt),
    cachedTokens: count(promptDetails?.cached_tokens),
    cacheWriteTokens: 0,
    reasoningTokens: count(completionDetails?.reasoning_tokens),
    serverToolCalls: count(u.num_server_side_tools_used),
  };
}
