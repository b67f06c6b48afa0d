import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * Runs `run` as a span of its own, a child of the active one: a step inside
 * an activity or a request that a trace should show as a step (for example
 * a media task's settlement run by its submission, activities/media.ts).
 * Without a tracer registered this is the no-op API's span.
 */
export function inSpan<T>(name: string, run: () => Promise<T>): Promise<T> {
  return trace.getTracer('model-gateway').startActiveSpan(name, { kind: SpanKind.INTERNAL }, async (span) => {
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
