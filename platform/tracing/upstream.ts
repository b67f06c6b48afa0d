import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { attemptOutcome, channelIdOf } from '../metrics/upstream';

/**
 * One span per channel-ladder attempt (chat, media submissions, clip
 * templates), installed as a ladder watcher (domain/channel-ladder.ts): the
 * channel, the attempt number and its outcome; the undici span of the HTTP
 * call to the vendor is its child.
 */
export function traceUpstreamAttempt<T>(entry: unknown, n: number, run: () => Promise<T>): Promise<T> {
  const channel = channelIdOf(entry);
  return trace.getTracer('model-gateway').startActiveSpan(
    `upstream attempt ${channel}`,
    { kind: SpanKind.INTERNAL, attributes: { 'gateway.channel': channel, 'gateway.attempt': n, 'gateway.failover': n > 1 } },
    async (span) => {
      try {
        const value = await run();
        span.setAttribute('gateway.outcome', 'ok');
        return value;
      } catch (err) {
        const outcome = attemptOutcome(err);
        span.setAttribute('gateway.outcome', outcome);
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}
