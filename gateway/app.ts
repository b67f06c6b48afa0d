import Koa from 'koa';
import Router from '@koa/router';
import type { ServiceDeps } from './deps';
import type { GatewayState } from './context';
import { errorHandler } from './middleware/error-handler';
import { trace } from './middleware/trace';
import { wellFormedPath } from './middleware/url-policy';
import { setBodyTimeouts } from './middleware/body';
import { modelRoutes } from './routes/models';
import { balanceRoutes } from './routes/balance';
import { embeddingRoutes } from './routes/embeddings';
import { adminRoutes } from './routes/admin';
import { adminPeopleRoutes } from './routes/admin-people';
import { agentRoutes } from './routes/admin-agents';
import { healthRoutes } from './routes/health';
import { chatRoutes } from './routes/chat';
import { imageRoutes } from './routes/images';
import { transcriptRoutes } from './routes/transcripts';
import { audioRoutes } from './routes/audio';
import { musicRoutes } from './routes/music';
import { clipTemplateRoutes } from './routes/clip-templates';
import { avatarRoutes } from './routes/avatars';
import { videoRoutes } from './routes/videos';
import { usageRoutes } from './routes/usage';
import { consoleMiddleware } from './console/index';
import { paymentRoutes } from './routes/payments';
import { kbFileRoutes } from './routes/kb-files';
import { adminKbRoutes } from './routes/admin-kb';
import { channelRoutes } from './routes/admin-channels';
import { wikiRoutes } from './routes/wiki';
import { mcpRoutes } from './routes/mcp';
import { difyRoutes } from './routes/dify';
import { webhookRoutes } from './routes/webhooks';
import { callLogRoutes } from './routes/calllog';
import { currentMetrics } from '../platform/metrics/index';
import { httpMetrics } from './middleware/metrics';
import { currentTracing } from '../platform/tracing/current';
import { traceLink } from './middleware/trace-link';
import { openApiRoutes } from './openapi/http';
import { indexRoutes } from './route-index';
import { batchRoutes } from './routes/batches';
import { leanHeaderSetter } from './response-headers';

/** The gateway as a Koa app, without listening: server.ts listens, tests may use app.callback(). */
export function createApp(deps: ServiceDeps): Koa<GatewayState> {
  const app = new Koa<GatewayState>();
  app.proxy = false;
  app.silent = true;
  leanHeaderSetter(app);
  setBodyTimeouts(app, { idleMs: deps.config.BODY_IDLE_TIMEOUT_MS, totalMs: deps.config.BODY_READ_TIMEOUT_MS });
  // The access log wraps the error handler, so it records the status the client got.
  app.use(trace(deps.log));
  if (currentTracing()) app.use(traceLink());
  const metrics = currentMetrics();
  if (metrics) app.use(httpMetrics(deps, metrics));
  app.use(errorHandler(deps.log));
  app.use(wellFormedPath());
  app.use(consoleMiddleware(deps));
  // One router holding every family's routes: a request is matched once, and one allowedMethods
  // answers 405/501, instead of passing through a routes() and an allowedMethods() per family.
  const root = new Router<GatewayState>();
  for (const router of [healthRoutes(deps), chatRoutes(deps), imageRoutes(deps), transcriptRoutes(deps), audioRoutes(deps), musicRoutes(deps), clipTemplateRoutes(deps), avatarRoutes(deps), videoRoutes(deps), usageRoutes(deps), modelRoutes(deps), balanceRoutes(deps), embeddingRoutes(deps), adminRoutes(deps), adminPeopleRoutes(deps), adminKbRoutes(deps), kbFileRoutes(deps), wikiRoutes(deps), mcpRoutes(deps), difyRoutes(deps), agentRoutes(deps), channelRoutes(deps), paymentRoutes(deps), webhookRoutes(deps), callLogRoutes(deps), openApiRoutes(), batchRoutes(deps)]) {
    root.use(router.routes());
  }
  // Matched by literal route heads first, not ~130 regexps per request (gateway/route-index.ts).
  indexRoutes(root);
  app.use(root.routes());
  app.use(root.allowedMethods());
  return app;
}
