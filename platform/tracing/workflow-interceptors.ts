/**
 * Workflow interceptors bundled with the workflows (dev/scripts/bundle-workflows.ts,
 * workers/worker.ts). They run in the workflow sandbox.
 *
 * A workflow whose start carried a trace context (the client had tracing on:
 * platform/tracing/temporal.ts) goes through Temporal's OpenTelemetry interceptors:
 * the run continues the caller's trace, each activity gets the context in its
 * headers, and the spans leave the sandbox through the worker's `exporter`
 * sink. A workflow started without one runs exactly as with no interceptor:
 * no span, no sink call, and the same commands as before this module existed,
 * so histories recorded without tracing replay unchanged.
 */
import type { WorkflowInterceptors } from '@temporalio/workflow';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';

/** The header Temporal's OpenTelemetry client interceptor writes (`TRACE_HEADER` of @temporalio/interceptors-opentelemetry). */
const TRACE_HEADER = '_tracer-data';

type Method = (input: unknown, next: (input: unknown) => unknown) => unknown;

/** An interceptor with every method of `make()`'s prototype, delegating to it when the run is traced and straight to `next` otherwise. */
function whenTraced<T extends object>(traced: () => boolean, proto: object, make: () => T): T {
  let real: T | undefined;
  const out: Record<string, Method> = {};
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === 'constructor' || typeof (proto as Record<string, unknown>)[name] !== 'function') continue;
    out[name] = (input, next) => {
      if (!traced()) return next(input);
      real ??= make();
      return ((real as unknown as Record<string, Method>)[name]).call(real, input, next);
    };
  }
  return out as unknown as T;
}

export const interceptors = (): WorkflowInterceptors => {
  let traced = false;
  const isTraced = () => traced;
  const inbound = whenTraced(isTraced, OpenTelemetryInboundInterceptor.prototype, () => new OpenTelemetryInboundInterceptor());
  return {
    inbound: [
      {
        ...inbound,
        execute(input, next) {
          traced = TRACE_HEADER in input.headers;
          return inbound.execute!(input, next);
        },
      },
    ],
    outbound: [whenTraced(isTraced, OpenTelemetryOutboundInterceptor.prototype, () => new OpenTelemetryOutboundInterceptor())],
    internals: [whenTraced(isTraced, OpenTelemetryInternalsInterceptor.prototype, () => new OpenTelemetryInternalsInterceptor())],
  };
};
