import { GatewayError } from '../../domain/errors';
import type { ServiceDeps } from '../deps';
import type { Ctx, Middleware } from '../context';
import { usageDoc, type UsageRow } from '../../capabilities/usage/usage';
import { walletOf } from '../../domain/api-key';
import { ClientDisconnected } from './body';

/**
 * Every public model call ends in exactly one usage row. Handlers write the
 * row for outcomes they own (success, interrupted, in-flight tasks); this
 * middleware writes it for refusals (`rejected`, cost 0) and failures. It goes
 * BEFORE authenticate: a 402 at authentication is a rejected call of a known
 * key (authenticate sets ctx.state.auth before that check); a 401 has no
 * account to log it against.
 */
export function usageCapture(deps: ServiceDeps, endpoint: string): Middleware {
  return async function captureUsage(ctx: Ctx, next) {
    ctx.state.usageEndpoint = endpoint;
    try {
      await next();
    } catch (err) {
      if (!ctx.state.usageRecorded && ctx.state.auth && err instanceof ClientDisconnected) {
        recordOutcome(deps, ctx, { status: 'interrupted', error_code: err.code, error_message: err.message });
      } else if (!ctx.state.usageRecorded && ctx.state.auth) {
        const e = err instanceof GatewayError ? err : null;
        const status = e && e.status < 500 ? 'rejected' : 'error';
        await recordOutcomeAhead(deps, ctx, { status, error_code: e?.code ?? 'internal_error', error_message: e?.message ?? 'internal error' });
      }
      throw err;
    }
  };
}

export type OutcomeRow = Partial<Parameters<ServiceDeps['usage']['record']>[0]> & {
  status: 'success' | 'error' | 'interrupted' | 'rejected' | 'in_flight';
};

/** The usage row of this call: who called, where, how long, and what the handler says happened. */
export function outcomeRow(ctx: Ctx, row: OutcomeRow): UsageRow {
  const auth = ctx.state.auth!;
  return {
    _id: ctx.state.requestId,
    request_id: ctx.state.requestId,
    account_id: auth.account.id,
    key_id: auth.key.id,
    key_name: auth.key.name,
    key_prefix: auth.key.prefix,
    endpoint: ctx.state.usageEndpoint ?? ctx.path,
    model: ctx.state.model ?? null,
    latency_ms: Math.round(performance.now() - ctx.state.startedAt),
    ...ctx.state.usageTags,
    ...(ctx.state.attempts?.length ? { attempts: ctx.state.attempts } : {}),
    ...row,
  };
}

/**
 * The row of a refused or failed call, written ahead to the ledger journal
 * (one Redis append, drained to Mongo like a charge's row) before the answer
 * leaves: a gateway killed right after answering no longer loses it with
 * the in-memory batch (the chaos run found such 402s). If Redis refuses the
 * append, the row goes to the batch as before.
 */
export async function recordOutcomeAhead(deps: ServiceDeps, ctx: Ctx, row: OutcomeRow): Promise<void> {
  ctx.state.usageRecorded = true;
  const doc = usageDoc(outcomeRow(ctx, row));
  await deps.wallet.journal.append({ u: doc }, walletOf(ctx.state.auth!.key)).catch(() => deps.usage.record(doc));
}

export function recordOutcome(deps: ServiceDeps, ctx: Ctx, row: OutcomeRow): void {
  ctx.state.usageRecorded = true;
  deps.usage.record(outcomeRow(ctx, row));
}
