import { GatewayError } from '../../domain/errors';
import type { GatewayDeps } from '../deps';
import type { Ctx, Middleware } from '../context';
import type { UsageRow } from '../../services/usage';
import { ClientDisconnected } from './body';

/**
 * Every public model call ends in exactly one usage row. Handlers write the
 * row for outcomes they own (success, interrupted, in-flight tasks); this
 * middleware writes it for refusals (`rejected`, cost 0) and failures. It goes
 * BEFORE authenticate: a 402 at authentication is a rejected call of a known
 * key (authenticate sets ctx.state.auth before that check); a 401 has no
 * account to log it against.
 */
export function usageCapture(deps: GatewayDeps, endpoint: string): Middleware {
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
        recordOutcome(deps, ctx, { status, error_code: e?.code ?? 'internal_error', error_message: e?.message ?? 'internal error' });
      }
      throw err;
    }
  };
}

export type OutcomeRow = Partial<Parameters<GatewayDeps['usage']['record']>[0]> & {
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

export function recordOutcome(deps: GatewayDeps, ctx: Ctx, row: OutcomeRow): void {
  ctx.state.usageRecorded = true;
  deps.usage.record(outcomeRow(ctx, row));
}
