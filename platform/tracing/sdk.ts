import { NodeSDK } from '@opentelemetry/sdk-node';
import { trace } from '@opentelemetry/api';
import { envDetector, hostDetector, processDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as OtlpProto } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as OtlpJson } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { KoaInstrumentation, KoaLayerType } from '@opentelemetry/instrumentation-koa';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { watchAttempts } from '../../domain/channel-ladder';
import { traceUpstreamAttempt } from './upstream';
import { currentTracing, setTracing, type Tracing } from './current';

/** The tracer every span of ours comes from. */
export const TRACER_NAME = 'model-gateway';

export { currentTracing, type Tracing };

/** The exporter the standard variables name: OTLP over http/protobuf (default) or http/json, or the console. */
function exportersFromEnv(env: Record<string, string | undefined>): SpanExporter[] {
  const names = (env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',').map((s) => s.trim()).filter((s) => s && s !== 'none');
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  return names.map((name) => {
    if (name === 'console') return new ConsoleSpanExporter();
    if (name !== 'otlp') throw new Error(`OTEL_TRACES_EXPORTER=${name}: this build exports traces with otlp or console`);
    if (protocol === 'http/json') return new OtlpJson();
    if (protocol === 'http/protobuf') return new OtlpProto();
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: this build speaks http/protobuf or http/json (point it at a collector's port 4318)`);
  });
}

/**
 * Start OpenTelemetry for this process: the HTTP server and client, Koa
 * routes, undici (every upstream call), ioredis and the MongoDB driver, plus
 * one span per channel-ladder attempt. Must run before those modules are
 * imported (platform/tracing/register.ts, loaded with `--import`). Only the
 * configured exporter sends anything, and only to the endpoint it names:
 * resource detection reads the environment, host and process, never a cloud
 * metadata service.
 */
export function startTracing(opts: { serviceName: string; spanProcessors?: SpanProcessor[]; env?: Record<string, string | undefined> }): Tracing {
  const started = currentTracing();
  if (started) return started;
  const env = opts.env ?? process.env;
  const spanProcessors = opts.spanProcessors ?? exportersFromEnv(env).map((e) => new BatchSpanProcessor(e));
  const resource = resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? opts.serviceName });
  const sdk = new NodeSDK({
    resource,
    autoDetectResources: true,
    resourceDetectors: [envDetector, hostDetector, processDetector],
    spanProcessors,
    // Traces only: Prometheus carries the metrics (platform/metrics/), pino the logs.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => req.url === '/healthz' || req.url === '/metrics',
      }),
      // Router layers only: one span per matched route, not one per middleware.
      new KoaInstrumentation({ ignoreLayersType: [KoaLayerType.MIDDLEWARE] }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new MongoDBInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  watchAttempts(traceUpstreamAttempt);
  const tracing: Tracing = {
    spanProcessors,
    resource,
    async shutdown() {
      await sdk.shutdown();
    },
  };
  setTracing(tracing);
  return tracing;
}

/** The tracer of our own spans (a no-op tracer while tracing is off). */
export function tracer() {
  return trace.getTracer(TRACER_NAME);
}
