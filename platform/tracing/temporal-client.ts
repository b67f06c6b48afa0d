import type { WorkflowClientInterceptor } from '@temporalio/client';
import { currentTracing } from './current';

/**
 * The Temporal client's interceptors: a started workflow carries the caller's
 * trace context in its headers. Temporal's OpenTelemetry interceptors (~10 MB
 * with the SDK 1.x they bring) load only when this process traces.
 */
export async function temporalClientInterceptors(): Promise<{ workflow: WorkflowClientInterceptor[] } | undefined> {
  if (!currentTracing()) return undefined;
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}
