import Router from '@koa/router';
import { GatewayError } from '../../domain/errors';
import type { ServiceDeps } from '../deps';
import type { GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { usageCapture } from '../middleware/usage-capture';
import { jsonBody } from '../middleware/body';

/** Embeddings were retired 2026-07: every call is 404 model_not_found (spec 1 section 4.8). */
export function embeddingRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post(
    '/v1/embeddings',
    usageCapture(deps, 'embeddings'),
    authenticate(deps, { methods: 'all', billable: true, touchLastUsed: true }),
    rateLimit(),
    jsonBody(1024 * 1024),
    (ctx) => {
      const model = (ctx.state.body as { model?: unknown }).model;
      ctx.state.model = typeof model === 'string' ? model : undefined;
      throw new GatewayError(
        'model_not_found',
        `Embedding models were retired on 2026-07; no model is available${typeof model === 'string' ? ` (requested '${model}')` : ''}`,
        { status: 404, param: 'model' },
      );
    },
  );
  return router;
}
