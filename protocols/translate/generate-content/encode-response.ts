import type { CanonicalResponse, FinishReason } from '../../canonical/response';
import type { NormalizedUsage } from '../../usage/normalized';
import { parseInput } from '../json-args';

export const GEMINI_FINISH_OUT: Record<FinishReason, string> = {
  stop: 'STOP',
  stop_sequence: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  content_filter: 'SAFETY',
};

/** canonical response -> GenerateContentResponse. */
export function encodeGenerateContentResponse(res: CanonicalResponse, opts: { model?: string } = {}): Record<string, unknown> {
  return {
    candidates: res.choices.map((c, index) => {
      const parts = c.content.map((b) =>
        b.type === 'text' ? { text: b.text } : { functionCall: { name: b.name, args: parseInput(b.arguments) } },
      );
      return { content: { role: 'model', parts }, finishReason: GEMINI_FINISH_OUT[c.finish], index };
    }),
    usageMetadata: geminiUsageOut(res.usage),
    modelVersion: opts.model ?? res.model,
    responseId: res.id,
  };
}

/** Normalized usage as usageMetadata: candidatesTokenCount excludes thoughts. */
export function geminiUsageOut(u: NormalizedUsage): Record<string, number> {
  const out: Record<string, number> = {
    promptTokenCount: u.inputTokens,
    candidatesTokenCount: Math.max(0, u.outputTokens - u.reasoningTokens),
    totalTokenCount: u.inputTokens + u.outputTokens,
  };
  if (u.cachedTokens > 0) out.cachedContentTokenCount = u.cachedTokens;
  if (u.reasoningTokens > 0) out.thoughtsTokenCount = u.reasoningTokens;
  return out;
}
