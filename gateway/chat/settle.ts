import type { Model } from '../../domain/catalogue';
import { chatCharge, type TokenUsage } from '../../domain/pricing';
import type { GatewayDeps } from '../deps';
import type { Ctx } from '../context';
import { recordOutcome } from '../middleware/usage-capture';

export type ChatOutcome = 'success' | 'interrupted' | 'error';

/**
 * Settle one chat turn on its actual usage, without a balance gate (the
 * balance may dip below 0 under concurrency; the next request is refused),
 * and write its usage row. The op id makes a repeated settlement a no-op.
 */
export async function settleChat(
  deps: GatewayDeps,
  ctx: Ctx,
  model: Model,
  usage: TokenUsage | null,
  outcome: { status: ChatOutcome; attempts: number; errorCode?: string; errorMessage?: string },
): Promise<number> {
  const auth = ctx.state.auth!;
  const cost = usage ? chatCharge(model, deps.catalogue().pricingRules, usage).costNano : 0;
  if (cost > 0) {
    await deps.wallet.apply({
      opId: `${ctx.state.requestId}:charge`,
      accountId: auth.account.id,
      keyId: auth.key.id,
      kind: 'charge',
      amountNano: -cost,
      keySpendNano: cost,
      ref: ctx.state.requestId,
    });
  }
  recordOutcome(deps, ctx, {
    status: outcome.status,
    model: model.id,
    input_tokens: usage?.inputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
    cached_tokens: usage?.cachedTokens ?? 0,
    server_tool_calls: usage?.serverToolCalls ?? 0,
    unit_count: usage ? usage.inputTokens + usage.outputTokens : 0,
    unit_type: 'token',
    cost_nano: cost,
    attempts_count: outcome.attempts,
    error_code: outcome.errorCode ?? null,
    error_message: outcome.errorMessage ?? null,
  });
  return cost;
}
