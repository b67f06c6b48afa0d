import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * A media task's settlement run inside its submission (activities/media.ts
 * `submitAndSettleMediaTask`) as a span of its own, `settle media task`, a
 * child of the activity's: a trace still shows the settlement as a step.
 * Without a tracer registered this is the no-op API's span.
 */
export function traceSettlement<T>(run: () => Promise<T>): Promise<T> {
  return trace.getTracer('model-gateway').startActiveSpan('settle media task', { kind: SpanKind.INTERNAL }, async (span) => {
    try {
      return await run();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}
