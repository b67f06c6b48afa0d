import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * Whether this process traces, without loading the OpenTelemetry SDK: the
 * gateway and the worker ask on every start, and the SDK with its
 * instrumentations (~20 MB of a process's memory) loads only when
 * platform/tracing/register.ts or a test starts it (platform/tracing/sdk.ts).
 */
export interface Tracing {
  /** The processors every span goes through (the Temporal workflow sink feeds the same ones). */
  spanProcessors: SpanProcessor[];
  resource: Resource;
  shutdown(): Promise<void>;
}

let tracing: Tracing | undefined;

/** The process's tracing once started, or undefined (off: no SDK, no hooks, no cost). A function: see platform/metrics/index.ts currentMetrics. */
export function currentTracing(): Tracing | undefined {
  return tracing;
}

/** Called once by platform/tracing/sdk.ts startTracing. */
export function setTracing(t: Tracing): void {
  tracing = t;
}
