import pRetry from 'p-retry';
import type { Model } from '../../domain/catalogue';
import { chatCharge, type TokenUsage } from '../../domain/pricing';
import type { GatewayDeps } from '../deps';
import type { Ctx } from '../context';
import { recordOutcome } from '../middleware/usage-capture';

export type ChatOutcome = 'success' | 'interrupted' | 'error';

export interface OutcomeInfo {
  status: ChatOutcome;
  attempts: number;
  errorCode?: string;
  errorMessage?: string;
}

/** One charge is tried 3 times, 50 then 100 ms apart (the op id makes a repeat a no-op), before it is logged for reconciliation. */
const CHARGE_RETRY = { retries: 2, minTimeout: 50, factor: 2, randomize: false } as const;

/**
 * Settle one chat turn on its actual usage, without a balance gate (the
 * balance may dip below 0 under concurrency; the next request is refused),
 * then write its usage row. The op id makes a repeated settlement a no-op;
 * the row's cost is what the ledger received, so rows and ledger always add
 * up (a charge that could not be written is logged and recorded at 0).
 */
export async function settleChat(deps: GatewayDeps, ctx: Ctx, model: Model, usage: TokenUsage | null, outcome: OutcomeInfo): Promise<number> {
  const auth = ctx.state.auth!;
  const latencyMs = Math.round(performance.now() - ctx.state.startedAt);
  let cost = usage ? chatCharge(model, deps.catalogue().pricingRules, usage).costNano : 0;
  let settleError: string | undefined;
  if (cost > 0) {
    const op = {
      opId: `${ctx.state.requestId}:charge`,
      accountId: auth.account.id,
      keyId: auth.key.id,
      kind: 'charge' as const,
      amountNano: -cost,
      keySpendNano: cost,
      ref: ctx.state.requestId,
    };
    try {
      await pRetry(() => deps.wallet.apply(op), CHARGE_RETRY);
    } catch (err) {
      deps.log.error('chat charge not written', { trace: ctx.state.requestId, account: auth.account.id, cost_nano: cost, err });
      settleError = `charge of ${cost} nano not written: ${(err as Error).message}`;
      cost = 0;
    }
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
    latency_ms: latencyMs,
    attempts_count: outcome.attempts,
    error_code: settleError ? 'settlement_failed' : outcome.errorCode ?? null,
    error_message: settleError ?? outcome.errorMessage ?? null,
  });
  return cost;
}

/**
 * Settlements started after their response went out, so the client never
 * waits on the ledger write. Bounded: past MAX_BACKGROUND the caller waits
 * (back-pressure instead of an unbounded backlog when the store is slow).
 */
const MAX_BACKGROUND = 256;
const background = new Set<Promise<unknown>>();

export function settleAfterResponse(deps: GatewayDeps, ctx: Ctx, model: Model, usage: TokenUsage | null, outcome: OutcomeInfo): Promise<void> | undefined {
  ctx.state.usageRecorded = true; // the row is on its way; a late error must not write a second one
  const p = settleChat(deps, ctx, model, usage, outcome).catch((err: unknown) => {
    deps.log.error('chat settlement failed', { trace: ctx.state.requestId, err });
  });
  background.add(p);
  void p.finally(() => background.delete(p));
  return background.size > MAX_BACKGROUND ? p.then(() => undefined) : undefined;
}

/** Wait for every settlement still running (shutdown, tests). */
export async function drainSettlements(): Promise<void> {
  while (background.size > 0) await Promise.all([...background]);
}
