import { context, propagation, trace } from '@opentelemetry/api';
import type { Ctx, Middleware } from '../context';

/**
 * Ties the OpenTelemetry trace to the request id (`x-gateway-trace`): the
 * request's span carries the id as `gateway.request_id`, and the response
 * carries the W3C `traceparent` of that span, so a client holding either
 * finds the other (the log lines carry both: platform/logger.ts). Mounted after
 * the access log only when tracing is on (gateway/app.ts).
 */
export function traceLink(): Middleware {
  return async function linkTrace(ctx: Ctx, next) {
    const span = trace.getActiveSpan();
    if (span) {
      span.setAttribute('gateway.request_id', ctx.state.requestId);
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      if (carrier.traceparent) ctx.set('traceparent', carrier.traceparent);
    }
    return next();
  };
}
