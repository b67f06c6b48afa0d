/**
 * Workflow interceptors bundled with the workflows (scripts/bundle-workflows.ts,
 * workers/worker.ts): Temporal's OpenTelemetry interceptors, which continue
 * the trace the client put in the workflow's headers, span each run, and put
 * the context in each activity's headers. Their spans leave the sandbox
 * through the worker's `exporter` sink (tracing/temporal.ts).
 */
export { interceptors } from '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors';
