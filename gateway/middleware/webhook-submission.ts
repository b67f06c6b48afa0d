import { errors } from '../../domain/errors';
import type { Config } from '../../platform/config';
import type { Db } from '../../capabilities/store';
import type { Ctx, Middleware } from '../context';
import { checkCallbackUrl } from '../../capabilities/webhooks/callback-url';
import { WebhookSecrets } from '../../capabilities/webhooks/secrets';

/**
 * `callback_url` on an async submission (docs/webhooks.md): checked against
 * the deployment's policy (400 `invalid_request` naming `callback_url`, in
 * the endpoint's error shape, before any money moves), taken out of the
 * body so no family parser and no vendor ever sees it, and kept in
 * `ctx.state.callbackUrl` for the task document. The account gets a signing
 * secret now if it has none (readable once by an operator).
 * Runs after the body is read and before the idempotency claim (whose
 * digest covers the raw body, `callback_url` included).
 */
export function callbackUrl(deps: { db: Db; config: Config }): Middleware {
  const secrets = new WebhookSecrets(deps);
  return async function readCallbackUrl(ctx: Ctx, next) {
    const body = ctx.state.body;
    if (body && typeof body === 'object' && !Array.isArray(body) && 'callback_url' in body) {
      const { callback_url: raw, ...rest } = body as Record<string, unknown>;
      ctx.state.body = rest;
      if (raw !== null && raw !== undefined) {
        const verdict = checkCallbackUrl(raw, deps.config.DEPLOYMENT_MODE);
        if (!verdict.ok) throw errors.invalidRequest(`callback_url ${verdict.reason}`, 'callback_url');
        ctx.state.callbackUrl = verdict.url.href;
        await secrets.ensure(ctx.state.auth!.account.id);
      }
    }
    await next();
  };
}
