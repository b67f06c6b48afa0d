import Router from '@koa/router';
import { html } from '../console/html';
import { formatCredits } from '../domain/money';
import { readRaw } from '../gateway/middleware/body';
import type { GatewayDeps } from '../gateway/deps';
import type { GatewayState } from '../gateway/context';
import { consoleServices } from '../console/services';
import { SIGNATURE_HEADER } from './signature';

/**
 * The processor stand-in's hosted checkout page (what Stripe Checkout shows
 * the payer), and the merchant's webhook that credits the wallet.
 */
export function paymentRoutes(deps: GatewayDeps): Router<GatewayState> {
  const svc = consoleServices(deps);
  const router = new Router<GatewayState>();

  router.get('/_processor/checkout/:id', async (ctx) => {
    const cs = await svc.processor.get(ctx.params.id);
    ctx.set('cache-control', 'no-store');
    ctx.set('content-security-policy', "default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'");
    ctx.type = 'html';
    ctx.body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Checkout · Payment processor (stand-in)</title><link rel="icon" href="data:,">
<style>body{font:16px system-ui,sans-serif;background:#eef1f6;margin:0;padding:2rem 1rem}main{max-width:26rem;margin:auto;background:#fff;border-radius:10px;padding:1.5rem;box-shadow:0 2px 12px #0002}
.amount{font-size:2rem;font-weight:600}.muted{color:#667}button{font:inherit;background:#4b4fd8;color:#fff;border:0;border-radius:6px;padding:.7rem 1.2rem;width:100%}a{color:#4b4fd8}</style></head>
<body><main><p class="muted">Payment processor (stand-in) · test mode</p><h1>Pay Model Gateway</h1>
<p class="amount" data-testid="checkout-amount">$${formatCredits(cs.amount_nano)}</p>
${cs.status === 'complete'
    ? html`<p>This checkout is already paid.</p><p><a href="${cs.success_url.replace('{CHECKOUT_SESSION_ID}', cs._id)}">Return to the merchant</a></p>`
    : html`<p class="muted">Card: 4242 4242 4242 4242 (test card, nothing is charged)</p>
<form method="post" action="/_processor/checkout/${cs._id}/pay"><button type="submit">Pay $${formatCredits(cs.amount_nano)}</button></form>
<p><a href="${cs.cancel_url}">Cancel and return</a></p>`}
</main></body></html>`.value;
  });

  router.post('/_processor/checkout/:id/pay', async (ctx) => {
    const cs = await svc.processor.pay(ctx.params.id, `${ctx.origin}/webhooks/payments`);
    ctx.redirect(cs.success_url.replace('{CHECKOUT_SESSION_ID}', cs._id));
  });

  router.post('/webhooks/payments', async (ctx) => {
    const raw = (await readRaw(ctx, 64 * 1024)).toString('utf8');
    const result = await svc.billing.handleWebhook(raw, ctx.get(SIGNATURE_HEADER));
    deps.log.info('payment webhook', { trace: ctx.state.requestId, ...result });
    ctx.body = { received: true, ...result };
  });
  return router;
}
