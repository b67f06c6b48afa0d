import Router from '@koa/router';
import type { GatewayDeps } from '../deps';
import type { GatewayState } from '../context';

export function healthRoutes(deps: GatewayDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.get('/healthz', async (ctx) => {
    await deps.redis.ping();
    ctx.body = { status: 'ok', models: deps.catalogue().models.length };
  });
  return router;
}
