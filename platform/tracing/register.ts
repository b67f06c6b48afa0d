/**
 * The tracing preload: `node --import tsx --import ./platform/tracing/register.ts gateway/server.ts`
 * (package.json's gateway and worker scripts, the Docker entrypoint). With
 * no OTEL_* variable asking for traces it does nothing. Otherwise it installs
 * the ESM loader hook the instrumentations need (import-in-the-middle) and
 * starts the SDK before the application's modules load.
 */
import { register } from 'node:module';
import { tracingWanted } from '../config';

if (tracingWanted().on) {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const { startTracing } = await import('./sdk');
  const script = process.argv[1] ?? '';
  startTracing({ serviceName: /workers?\//.test(script) ? 'model-gateway-worker' : 'model-gateway' });
}
