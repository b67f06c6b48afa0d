import type { Model, PricingRules } from './catalogue';
import { lineCost, mulRatio, ONE, parseCredits, ratio, type Nano, type Ratio } from './money';

/**
 * Chat pricing, every rule of spec 1 section 2.4, parameters from the
 * catalogue's pricing_rules (data, not code). Workflow-safe and pure.
 */
export interface TokenUsage {
  /** Whole prompt: uncached + cache reads + cache writes. */
  inputTokens: number;
  outputTokens: number;
  /** Cache reads (cached_tokens / cache_read_input_tokens). */
  cachedTokens: number;
  /** Cache writes (cache_creation_input_tokens). */
  cacheWriteTokens: number;
  /** usage.num_server_side_tools_used */
  serverToolCalls: number;
}

export interface ChatCharge {
  costNano: Nano;
  lines: { input: Nano; cached: Nano; cacheWrite: Nano; output: Nano; serverTools: Nano };
  /** Multiplier applied to token prices (promotion x long context x batch), for the record. */
  multiplier: string;
  /** Each multiplier that was applied to the token prices, as a fraction (1/1 when not in force). */
  multipliers: { promotion: Ratio; longContext: Ratio; batch: Ratio; cacheWrite: Ratio };
}

/** How a charge is priced beyond its usage: a batch line takes the catalogue's batch_multiplier. */
export interface ChargeOptions {
  batch?: boolean;
}

/** The batch discount of the catalogue (batch_multiplier, default 1.0) for a batch line; 1 otherwise. */
export function batchMultiplierOf(rules: PricingRules, opts: ChargeOptions = {}): Ratio {
  return opts.batch && rules.batch_multiplier !== undefined ? ratio(rules.batch_multiplier) : ONE;
}

const PER_MILLION = 1_000_000;

/** The promotion in force for a model's family at `now`, as a ratio. */
export function promotionOf(model: Model, rules: PricingRules, now: Date = new Date()): Ratio {
  const promo = rules.promotions.find((p) => p.family === model.family && (!p.until || now <= new Date(`${p.until}T23:59:59Z`)));
  return promo ? ratio(promo.multiplier) : ONE;
}

/** Prompts of threshold tokens or more double every token price of the turn, for the listed models. */
export function longContextOf(model: Model, rules: PricingRules, promptTokens: number): Ratio {
  return rules.long_context.models.includes(model.id) && promptTokens >= rules.long_context.threshold_tokens
    ? ratio(rules.long_context.multiplier)
    : ONE;
}

export function chatCharge(model: Model, rules: PricingRules, usage: TokenUsage, now: Date = new Date(), opts: ChargeOptions = {}): ChatCharge {
  const p = model.pricing;
  const input = parseCredits(p.input_per_1m ?? 0);
  const output = parseCredits(p.output_per_1m ?? 0);
  // Without a listed cached price, cache reads cost the input price (no discount).
  const cached = p.cached_per_1m === undefined ? input : parseCredits(p.cached_per_1m);
  const promotion = promotionOf(model, rules, now);
  const longContext = longContextOf(model, rules, usage.inputTokens);
  const batch = batchMultiplierOf(rules, opts);
  const m = batch === ONE ? mulRatio(promotion, longContext) : mulRatio(mulRatio(promotion, longContext), batch);
  const writeMultiplier = rules.cache_write.families.includes(model.family) ? ratio(rules.cache_write.multiplier) : ONE;
  const cachedTokens = Math.min(usage.cachedTokens, usage.inputTokens);
  const writeTokens = Math.min(usage.cacheWriteTokens, usage.inputTokens - cachedTokens);
  const plainInput = Math.max(0, usage.inputTokens - cachedTokens - writeTokens);
  const fee = rules.server_tool_fee.families.includes(model.family) ? parseCredits(rules.server_tool_fee.credits_per_call) : 0;
  const lines = {
    input: lineCost(plainInput, input, PER_MILLION, m),
    cached: lineCost(cachedTokens, cached, PER_MILLION, m),
    cacheWrite: lineCost(writeTokens, input, PER_MILLION, mulRatio(m, writeMultiplier)),
    output: lineCost(usage.outputTokens, output, PER_MILLION, m),
    serverTools: fee * Math.max(0, usage.serverToolCalls),
  };
  const costNano = lines.input + lines.cached + lines.cacheWrite + lines.output + lines.serverTools;
  return { costNano, lines, multiplier: `${m.num}/${m.den}`, multipliers: { promotion, longContext, batch, cacheWrite: writeMultiplier } };
}

/** The output estimate of the pre-charge gate: max_tokens, else min(default_max_tokens, 32768). */
export const PRECHARGE_OUTPUT_CAP = 32_768;

export function prechargeEstimate(model: Model, rules: PricingRules, promptJsonBytes: number, maxTokens: number | undefined, now: Date = new Date()): Nano {
  const inputTokens = Math.ceil(promptJsonBytes / 4);
  const outputTokens = maxTokens ?? Math.min(model.default_max_tokens ?? PRECHARGE_OUTPUT_CAP, PRECHARGE_OUTPUT_CAP);
  try {
    return chatCharge(model, rules, { inputTokens, outputTokens, cachedTokens: 0, cacheWriteTokens: 0, serverToolCalls: 0 }, now).costNano;
  } catch (err) {
    // A max_tokens so large its price is past 2^53 nano: more than any balance can hold, so the gate refuses it (402).
    if (err instanceof RangeError) return Number.MAX_SAFE_INTEGER;
    throw err;
  }
}
