import Router from '@koa/router';
import { z } from 'zod';
import { parseCredits } from '../../domain/money';
import { GatewayError } from '../../domain/errors';
import { readRaw } from '../middleware/body';
import { jsonBody } from '../middleware/body';
import { validBody, validParams } from '../middleware/validate';
import { authenticate } from '../middleware/auth';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { consoleServices } from '../console/services';
import { SESSION_COOKIE } from '../console/session';
import { checkCsrf } from '../console/guard';
import type { CCtx } from '../console/context';
import { formatCredits } from '../../domain/money';
import { verifyStripeEvent } from '../../capabilities/billing/stripe';
import { NANO_PER_CENT } from '../../capabilities/billing/billing';
import { standInRoutes } from '../../dev/simulator/payments/stand-in';

export const CheckoutBody = z.object({
  amount_usd: z.union([z.number(), z.string()]).transform((v, c) => {
    try {
      return parseCredits(typeof v === 'number' ? String(v) : v);
    } catch {
      c.addIssue({ code: 'custom', message: 'amount_usd must be an amount in US dollars (e.g. 150 or "150.00")' });
      return z.NEVER;
    }
  }),
}).strict();

/**
 * Top-ups over HTTP (docs/payments.md):
 * - `POST /api/v1/billing/checkout`: an API key of the account (Authorization: Bearer / x-api-key), or a
 *   console session (its cookie and the session's CSRF token in `x-csrf-token`) for its current account;
 * - `GET /api/v1/billing/topups/:id`: the top-up's state;
 * - `POST /webhooks/stripe`: Stripe's events, verified with the SDK on the raw body;
 * - the development stand-in's checkout pages, in development and test only (404 in production).
 */
export function paymentRoutes(deps: ServiceDeps): Router<GatewayState> {
  const svc = consoleServices(deps);
  const router = new Router<GatewayState>();
  const keyAuth = authenticate(deps, { methods: 'header-only', billable: false, touchLastUsed: true, rateLimited: false });

  /** The account the caller acts for: its key's, or the console session's current one. */
  const principal = async (ctx: Ctx, next: () => Promise<void>) => {
    if (ctx.get('authorization') || ctx.get('x-api-key')) return keyAuth(ctx, next);
    const token = ctx.cookies.get(SESSION_COOKIE);
    const session = token ? await svc.sessions.get(token) : null;
    if (!session) throw new GatewayError('invalid_api_key', 'authentication failed: send an API key of the account, or sign in to the console', { status: 401 });
    checkCsrf(ctx as unknown as CCtx, session.csrf);
    const account = await svc.access.sessionAccount(session.principal, session.accountId, await svc.access.managed(session.principal));
    if (!account) throw new GatewayError('not_found', 'no account to top up', { status: 404, type: 'invalid_request_error' });
    ctx.state.billingAccount = { id: account.id, by: session.principal.kind === 'user' ? `user:${session.principal.userId}` : 'operator' };
    return next();
  };
  const accountOf = (ctx: Ctx) => ctx.state.billingAccount ?? { id: ctx.state.auth!.account.id, by: `key:${ctx.state.auth!.key.id}` };

  router.post('/api/v1/billing/checkout', principal, jsonBody(16 * 1024), async (ctx) => {
    const { amount_usd } = validBody(ctx, CheckoutBody);
    const who = accountOf(ctx);
    ctx.status = 201;
    ctx.body = await svc.billing.startCheckout(who.id, amount_usd, who.by);
  });

  router.get('/api/v1/billing/topups/:id', principal, async (ctx) => {
    const { id } = validParams(ctx, z.object({ id: z.string().min(1).max(100) }));
    const doc = await svc.billing.topUp(accountOf(ctx).id, id);
    ctx.body = {
      id: doc._id, amount_usd: formatCredits(doc.amount_nano), status: doc.status, url: doc.url, session_id: doc.session_id,
      created_at: doc.created_at.toISOString(), paid_at: doc.paid_at?.toISOString() ?? null,
      // What the payment's refunds and disputes took back out of the wallet (the status stays `paid`).
      refunded_usd: formatCredits((doc.refunded_cents ?? 0) * NANO_PER_CENT),
      disputed_usd: formatCredits(Object.values(doc.disputes ?? {}).reduce((a, b) => a + b, 0) * NANO_PER_CENT),
    };
  });

  router.post('/webhooks/stripe', async (ctx) => {
    const secret = svc.payments.webhookSecret;
    if (!secret) throw new GatewayError('not_found', 'top-ups are not enabled on this gateway', { status: 404, type: 'invalid_request_error' });
    const raw = await readRaw(ctx, 256 * 1024);
    const event = await verifyStripeEvent(raw, ctx.get('stripe-signature') || undefined, secret);
    const result = await svc.billing.handleEvent(event);
    deps.log.info('stripe event', { trace: ctx.state.requestId, event: event.id, type: event.type, ...result });
    ctx.body = { received: true, ...result };
  });

  // The stand-in exists only outside production (capabilities/billing/select.ts); its paths are then unknown: 404.
  const standIn = svc.payments.standIn;
  if (standIn && deps.config.DEPLOYMENT_MODE !== 'production') {
    const deliver = async (raw: Buffer, signature: string) => {
      const secret = svc.payments.webhookSecret!;
      return svc.billing.handleEvent(await verifyStripeEvent(raw, signature, secret));
    };
    standInRoutes(router, standIn, deliver);
  }
  return router;
}
