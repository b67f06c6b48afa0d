import { newRequestId } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import type { Ctx, Middleware } from '../context';

export const TRACE_HEADER = 'x-gateway-trace';

/** A request id on every response (errors included) and one access log line per request. */
export function trace(log: Logger): Middleware {
  return async function traceRequest(ctx: Ctx, next) {
    ctx.state.requestId = newRequestId();
    ctx.state.startedAt = performance.now();
    ctx.set(TRACE_HEADER, ctx.state.requestId);
    try {
      await next();
    } finally {
      if (log.enabled?.('info') !== false) logAccess(log, ctx);
    }
  };
}

function logAccess(log: Logger, ctx: Ctx): void {
  const line = {
    trace: ctx.state.requestId,
    method: ctx.method,
    path: ctx.path,
    status: ctx.status,
    ms: Math.round((performance.now() - ctx.state.startedAt) * 10) / 10,
    account: ctx.state.auth?.account.id,
  };
  // Written once the answer is on its way: Koa sends the response after this middleware returns,
  // and the line (its formatting and a synchronous write) would otherwise come before every answer.
  setImmediate(writeAccessLine, log, line);
}

function writeAccessLine(log: Logger, line: Record<string, unknown>): void {
  log.info('request', line);
}
