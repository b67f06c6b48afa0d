import type { TokenUsage } from './pricing';

/**
 * Usage to bill for one chat turn, when the upstream's own report cannot be
 * trusted. The spec's character estimate (1-core sections 6 and 8): input
 * tokens = bytes of the prompt JSON / 4, output tokens = characters of the
 * generated output / 4. Used for interrupted turns (no usage arrived) and for
 * upstreams that report usage missing, zero or implausibly low for what they
 * delivered: delivered output is never billed at 0.
 */

/** Why the upstream's usage was replaced by the estimate (the row says so, a counter counts it). */
export type UsageMisreport = 'missing' | 'zero' | 'too_low';

/**
 * A reported output count is implausible when the delivered text would need
 * more than 16 characters per token (real tokenizers average about 4 on
 * English and fewer on other scripts; hidden reasoning only adds tokens).
 */
export const MAX_CHARS_PER_TOKEN = 16;

export const estimateTokens = (charsOrBytes: number): number => Math.ceil(charsOrBytes / 4);

export interface BilledUsage {
  usage: TokenUsage | null;
  /** Set when the upstream's report of a completed turn was replaced (or completed) by the estimate. */
  misreport?: UsageMisreport;
  /** Whether any part of `usage` is the estimate rather than the upstream's figure. */
  estimated: boolean;
}

export function usageToBill(input: {
  reported: TokenUsage | null;
  /**
   * Characters of the output the client received (text, reasoning text, tool names and arguments).
   * May be a getter that counts on demand: it is not read when `outputCharsAtMost` already settles it.
   */
  outputChars: number;
  /** A bound the count cannot exceed, when known cheaply (a stream's unparsed chunk text, protocols/usage). */
  outputCharsAtMost?: number;
  /** Bytes of the prompt JSON (the pre-charge measure). */
  promptBytes: number;
  /** The turn reached its protocol's proper end. */
  completed: boolean;
}): BilledUsage {
  const { reported, promptBytes, completed } = input;
  const inEstimate = estimateTokens(promptBytes);
  // The usual turn: complete, input and output reported, and the output could not be implausibly low
  // even if every character of the bound was output. The exact count would change nothing below.
  if (completed && reported && reported.outputTokens > 0 && (reported.inputTokens > 0 || inEstimate === 0) &&
    input.outputCharsAtMost !== undefined && input.outputCharsAtMost <= reported.outputTokens * MAX_CHARS_PER_TOKEN) {
    return { usage: reported, estimated: false };
  }
  const outputChars = input.outputChars;
  const outEstimate = estimateTokens(outputChars);
  if (!completed) {
    // Interrupted: actual usage when some arrived, never less than the output delivered; nothing for an empty output.
    if (outputChars === 0) return { usage: null, estimated: false };
    if (!reported) return { usage: estimated(inEstimate, outEstimate), estimated: true };
    const usage = { ...reported, outputTokens: Math.max(reported.outputTokens, outEstimate) };
    if (usage.inputTokens === 0) usage.inputTokens = inEstimate;
    return { usage, estimated: usage.outputTokens !== reported.outputTokens || usage.inputTokens !== reported.inputTokens };
  }
  if (!reported) {
    if (outputChars === 0 && promptBytes === 0) return { usage: null, estimated: false };
    return { usage: estimated(inEstimate, outEstimate), misreport: 'missing', estimated: true };
  }
  const noInput = reported.inputTokens === 0 && inEstimate > 0;
  const noOutput = reported.outputTokens === 0 && outputChars > 0;
  const lowOutput = !noOutput && reported.outputTokens * MAX_CHARS_PER_TOKEN < outputChars;
  if (!noInput && !noOutput && !lowOutput) return { usage: reported, estimated: false };
  // The input count is only replaced when absent: prompt bytes overstate tokens (JSON, images as base64).
  return {
    usage: {
      ...reported,
      inputTokens: noInput ? inEstimate : reported.inputTokens,
      outputTokens: noOutput || lowOutput ? Math.max(reported.outputTokens, outEstimate) : reported.outputTokens,
    },
    misreport: (noInput && reported.outputTokens === 0) || noOutput ? 'zero' : lowOutput ? 'too_low' : 'zero',
    estimated: true,
  };
}

function estimated(inputTokens: number, outputTokens: number): TokenUsage {
  return { inputTokens, outputTokens, cachedTokens: 0, cacheWriteTokens: 0, serverToolCalls: 0 };
}
