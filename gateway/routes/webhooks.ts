import Router from '@koa/router';
import { errors } from '../../domain/errors';
import type { TaskDocument } from '../../domain/media/task';
import type { ServiceDeps } from '../deps';
import type { Next } from 'koa';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { requireAdmin } from './admin';
import { deliveryLog } from '../../capabilities/webhooks/deliveries';
import { WebhookSecrets } from '../../capabilities/webhooks/secrets';
import { replayTaskWebhook } from '../../capabilities/webhooks/replay';

/**
 * Task webhooks over HTTP (docs/webhooks.md):
 * - `GET /v1/tasks/{id}/deliveries`: the delivery log of any task of the key's account (404 otherwise);
 * - `POST /v1/tasks/{id}/deliveries/replay`: send the webhook again (same event id), 202;
 * - operators: `POST /admin/v1/accounts/{id}/webhook-secret` (create, 201, the secret shown once),
 *   `POST .../webhook-secret/rotate` (a new secret, the old one signs too for 24 h),
 *   `GET .../webhook-secret` (metadata; the plaintext only if it was never shown).
 */
export function webhookRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const secrets = new WebhookSecrets(deps);
  const read = [authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true }), rateLimit()];

  router.get('/v1/tasks/:id/deliveries', ...read, async (ctx) => {
    const task = await deps.db.Task.findById(ctx.params.id).lean<TaskDocument>();
    if (!task || task.account_id !== ctx.state.auth!.account.id) throw errors.notFound(`no task ${ctx.params.id}`);
    ctx.body = await deliveryLog(deps.db, task);
  });

  router.post('/v1/tasks/:id/deliveries/replay', ...read, async (ctx) => {
    ctx.status = 202;
    ctx.body = await replayTaskWebhook(deps, ctx.state.auth!.account.id, ctx.params.id);
  });

  const path = '/admin/v1/accounts/:account/webhook-secret';
  const operator = [
    requireAdmin(deps.config.ADMIN_TOKEN),
    async (ctx: Ctx, next: Next) => {
      if (!(await deps.db.Account.exists({ _id: ctx.params.account }))) throw errors.notFound(`no account ${ctx.params.account}`);
      await next();
    },
  ];
  router.post(path, ...operator, async (ctx) => {
    ctx.status = 201;
    ctx.body = await secrets.create(ctx.params.account);
  });
  router.post(`${path}/rotate`, ...operator, async (ctx) => {
    ctx.body = await secrets.rotate(ctx.params.account);
  });
  router.get(path, ...operator, async (ctx) => {
    ctx.body = await secrets.read(ctx.params.account);
  });
  return router;
}
