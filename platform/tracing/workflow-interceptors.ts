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
import type * as Otel from '@temporalio/interceptors-opentelemetry/lib/workflow';

/**
 * Temporal's OpenTelemetry interceptors, loaded by the first traced run that needs them. The sandbox
 * evaluates a workflow's modules anew for every run (the reusable V8 context shares only what the
 * bundle loads before any workflow exists), and these with OpenTelemetry's own (about 90 modules,
 * semantic conventions' tables among them) were most of the cost of starting any run, traced or not:
 * webpack bundles a `require` inside a function but evaluates it only when called.
 */
const otel = (): typeof Otel => require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof Otel;

/** The header Temporal's OpenTelemetry client interceptor writes (`TRACE_HEADER` of @temporalio/interceptors-opentelemetry). */
const TRACE_HEADER = '_tracer-data';

type Method = (input: unknown, next: (input: unknown) => unknown) => unknown;

/**
 * An interceptor that answers for every method name: the real interceptor's (made by `make` on the
 * first traced call) when the run is traced and it has the method, straight to `next` otherwise.
 * A proxy, so the interceptors' classes need not be loaded to learn their methods' names.
 */
function whenTraced(traced: () => boolean, make: () => object, own: Record<string, Method> = {}): object {
  let real: Record<string, unknown> | undefined;
  const methods = new Map<string, Method>(Object.entries(own));
  return new Proxy({}, {
    get(_, name) {
      // Not a thenable: nothing awaits an interceptor, and a `then` would make it look like a promise.
      if (typeof name !== 'string' || name === 'then') return undefined;
      let method = methods.get(name);
      if (!method) {
        method = (input, next) => {
          if (!traced()) return next(input);
          real ??= make() as Record<string, unknown>;
          const f = real[name];
          return typeof f === 'function' ? (f as Method).call(real, input, next) : next(input);
        };
        methods.set(name, method);
      }
      return method;
    },
  });
}

export const interceptors = (): WorkflowInterceptors => {
  let traced = false;
  const isTraced = () => traced;
  let realInbound: Otel.OpenTelemetryInboundInterceptor | undefined;
  const inbound = () => (realInbound ??= new (otel().OpenTelemetryInboundInterceptor)());
  return {
    inbound: [
      whenTraced(isTraced, inbound, {
        execute(input, next) {
          traced = TRACE_HEADER in (input as { headers: Record<string, unknown> }).headers;
          return traced ? inbound().execute(input as Parameters<Otel.OpenTelemetryInboundInterceptor['execute']>[0], next as never) : next(input);
        },
      }),
    ],
    outbound: [whenTraced(isTraced, () => new (otel().OpenTelemetryOutboundInterceptor)())],
    internals: [whenTraced(isTraced, () => new (otel().OpenTelemetryInternalsInterceptor)())],
  } as WorkflowInterceptors;
};
