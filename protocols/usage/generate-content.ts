import { asRecord, count, type NormalizedUsage } from './normalized';

/**
 * generate-content `usageMetadata`: promptTokenCount includes the cached
 * content (cachedContentTokenCount); tool results fed back to the model are
 * counted apart (toolUsePromptTokenCount) and billed as input; thoughts
 * (thoughtsTokenCount) are generated tokens not in candidatesTokenCount.
 */
export function generateContentUsage(usageMetadata: unknown): NormalizedUsage | undefined {
  const u = asRecord(usageMetadata);
  if (!u) return undefined;
  const thoughts = count(u.thoughtsTokenCount);
  return {
    inputTokens: count(u.promptTokenCount) + count(u.toolUsePromptTokenCount),
    outputTokens: count(u.candidatesTokenCount) + thoughts,
    cachedTokens: count(u.cachedContentTokenCount),
    cacheWriteTokens: 0,
    reasoningTokens: thoughts,
    serverToolCalls: 0,
  };
}
