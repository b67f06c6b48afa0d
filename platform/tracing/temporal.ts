import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { InjectedSinks, WorkerOptions } from '@temporalio/worker';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  makeWorkflowExporter,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import { currentTracing } from './current';

/** The workflow interceptor module the worker bundles (Temporal's OpenTelemetry interceptors, re-exported). */
export const WORKFLOW_INTERCEPTORS_PATH = new URL('./workflow-interceptors.ts', import.meta.url).pathname;

export { temporalClientInterceptors } from './temporal-client';

/**
 * Spans from the workflow sandbox are made by OpenTelemetry SDK 1.x (inside
 * @temporalio/interceptors-opentelemetry); our processors are SDK 2.x, which
 * names the parent and the scope differently. This adapter gives each such
 * span the 2.x fields before our processors see it.
 */
function sandboxSpanAdapter(processors: SpanProcessor[]): SpanProcessor {
  return {
    onStart() {},
    onEnd(span: ReadableSpan) {
      const v1 = span as ReadableSpan & { parentSpanId?: string; instrumentationLibrary?: { name: string; version?: string } };
      const ctx = span.spanContext();
      const adapted: ReadableSpan = {
        ...v1,
        spanContext: () => ctx,
        parentSpanContext: v1.parentSpanContext ?? (v1.parentSpanId ? { traceId: ctx.traceId, spanId: v1.parentSpanId, traceFlags: ctx.traceFlags } : undefined),
        instrumentationScope: v1.instrumentationScope ?? v1.instrumentationLibrary ?? { name: '@temporalio/interceptors-opentelemetry' },
      };
      for (const p of processors) p.onEnd(adapted);
    },
    forceFlush: async () => {
      await Promise.all(processors.map((p) => p.forceFlush()));
    },
    shutdown: async () => undefined,
  };
}

/**
 * What a worker adds for tracing: the activity interceptors (a RunActivity
 * span under the workflow's StartActivity span) and the `exporter` sink that
 * carries the workflow's own spans out of the sandbox. The workflow
 * interceptors are always in the bundle (dev/scripts/bundle-workflows.ts), so the
 * sink is always registered: with tracing off it drops what it gets.
 */
export function workerTracing(): { activity: NonNullable<NonNullable<WorkerOptions['interceptors']>['activity']>; sinks: InjectedSinks<OpenTelemetrySinks> } {
  const t = currentTracing();
  if (!t) return { activity: [], sinks: { exporter: { export: { fn: () => undefined } } } };
  return {
    activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    sinks: { exporter: makeWorkflowExporter(sandboxSpanAdapter(t.spanProcessors) as never, t.resource as never) },
  };
}
