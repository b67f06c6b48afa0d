import Router from '@koa/router';
import type { Next } from 'koa';
import { errors } from '../../domain/errors';
import { safeEqual } from '../../platform/secrets';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { CallLog, type LogReader } from '../../capabilities/calllog/service';

/**
 * `GET /api/v1/logs/{request_id or task_id}` (docs/call-log.md): with an API
 * key, the calls of the key's account (404 for any other id); with the
 * admin token, any call, plus the task's Temporal workflow link.
 */
export function callLogRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const log = new CallLog(deps);
  const keyAuth = authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true });
  const limit = rateLimit();

  const reader = async (ctx: Ctx, next: Next) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'))?.[1]?.trim();
    if (bearer && safeEqual(bearer, deps.config.ADMIN_TOKEN)) {
      ctx.state.logReader = { kind: 'operator' };
      return next();
    }
    return keyAuth(ctx, () => limit(ctx, async () => {
      ctx.state.logReader = { kind: 'account', accountId: ctx.state.auth!.account.id };
      await next();
    }));
  };

  router.get('/api/v1/logs/:id', reader, async (ctx) => {
    const entry = await log.lookup(ctx.params.id, ctx.state.logReader as LogReader);
    if (!entry) throw errors.notFound(`no call ${ctx.params.id}`);
    ctx.body = entry;
  });
  return router;
}
