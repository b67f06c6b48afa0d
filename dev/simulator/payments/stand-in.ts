import type Router from '@koa/router';
import { Schema, type Model } from 'mongoose';
import type { MongoConn } from '../../../platform/mongo';
import { newId } from '../../../platform/ids';
import { GatewayError } from '../../../domain/errors';
import { html } from '../../../gateway/console/html';
import type { CheckoutCreated, CheckoutRequest, PaymentProcessor } from '../../../capabilities/billing/processor';
import { signStripePayload } from '../../../capabilities/billing/stripe';

/**
 * The payment-processor stand-in, for development and test only (it is never
 * built, and none of its paths is mounted, when DEPLOYMENT_MODE=production:
 * gateway/routes/payments.ts). It hosts a checkout page with a test card; "paying"
 * hands the gateway's webhook handler the same signed
 * `checkout.session.completed` event Stripe would send, signed the Stripe way
 * with the webhook secret, in process: no URL is built, nothing is fetched.
 */
interface StandInCheckoutDoc {
  _id: string;
  topup_id: string;
  account_id: string;
  amount_cents: number;
  success_url: string;
  cancel_url: string;
  status: 'open' | 'complete';
  created_at: Date;
}

const StandInCheckoutSchema = new Schema<StandInCheckoutDoc>(
  { _id: String, topup_id: String, account_id: String, amount_cents: Number, success_url: String, cancel_url: String, status: String, created_at: Date },
  { versionKey: false, _id: false },
);

/** Hands a signed event body to the gateway's webhook handler (verification included). */
export type DeliverEvent = (rawBody: Buffer, signature: string) => Promise<unknown>;

export class StandInProcessor implements PaymentProcessor {
  readonly name = 'stand-in' as const;
  private readonly model: Model<StandInCheckoutDoc>;

  constructor(db: MongoConn, private readonly publicBaseUrl: string, private readonly webhookSecret: string) {
    this.model = (db.conn.models.StandInCheckout as Model<StandInCheckoutDoc> | undefined)
      ?? db.conn.model<StandInCheckoutDoc>('StandInCheckout', StandInCheckoutSchema, 'processor_checkouts');
  }

  async createCheckout(req: CheckoutRequest): Promise<CheckoutCreated> {
    const doc: StandInCheckoutDoc = {
      _id: newId('cs'), topup_id: req.topUpId, account_id: req.accountId, amount_cents: req.amountCents,
      success_url: req.successUrl, cancel_url: req.cancelUrl, status: 'open', created_at: new Date(),
    };
    await this.model.create(doc);
    return { sessionId: doc._id, url: `${this.publicBaseUrl}/_processor/checkout/${doc._id}` };
  }

  async get(id: string): Promise<StandInCheckoutDoc> {
    const doc = await this.model.findById(id).lean<StandInCheckoutDoc>();
    if (!doc) throw new GatewayError('not_found', `no checkout session ${id}`, { status: 404, type: 'invalid_request_error' });
    return doc;
  }

  /** The event Stripe sends for a paid session (the fields billing reads, and a few more). */
  completedEvent(doc: StandInCheckoutDoc): string {
    return JSON.stringify({
      id: `evt_${doc._id}`,
      object: 'event',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      data: {
        object: {
          id: doc._id, object: 'checkout.session', mode: 'payment', client_reference_id: doc.topup_id,
          metadata: { topup_id: doc.topup_id, account_id: doc.account_id }, payment_status: 'paid', status: 'complete',
          amount_total: doc.amount_cents, currency: 'usd', payment_intent: `pi_${doc._id}`,
        },
      },
    });
  }

  /** The payer confirmed: the session is paid and its signed event delivered (a redelivery credits nothing more). */
  async pay(id: string, deliver: DeliverEvent): Promise<StandInCheckoutDoc> {
    const doc = await this.get(id);
    if (doc.status === 'open') await this.model.updateOne({ _id: id }, { $set: { status: 'complete' } });
    const body = this.completedEvent(doc);
    await deliver(Buffer.from(body), signStripePayload(body, this.webhookSecret));
    return { ...doc, status: 'complete' };
  }
}

const dollars = (cents: number) => (cents / 100).toFixed(2);

/** The stand-in's hosted checkout page (what Stripe Checkout shows the payer) and its pay button. */
export function standInRoutes<S>(router: Router<S>, processor: StandInProcessor, deliver: DeliverEvent): void {
  router.get('/_processor/checkout/:id', async (ctx) => {
    const cs = await processor.get(ctx.params.id);
    ctx.set('cache-control', 'no-store');
    ctx.set('content-security-policy', "default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'");
    ctx.type = 'html';
    ctx.body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Checkout · Payment processor (stand-in)</title><link rel="icon" href="data:,">
<style>body{font:16px system-ui,sans-serif;background:#eef1f6;margin:0;padding:2rem 1rem}main{max-width:26rem;margin:auto;background:#fff;border-radius:10px;padding:1.5rem;box-shadow:0 2px 12px #0002}
.amount{font-size:2rem;font-weight:600}.muted{color:#667}button{font:inherit;background:#4b4fd8;color:#fff;border:0;border-radius:6px;padding:.7rem 1.2rem;width:100%}a{color:#4b4fd8}</style></head>
<body><main><p class="muted">Payment processor (stand-in) · development and test only</p><h1>Pay Model Gateway</h1>
<p class="amount" data-testid="checkout-amount">$${dollars(cs.amount_cents)}</p>
${cs.status === 'complete'
    ? html`<p>This checkout is already paid.</p><p><a href="${cs.success_url}">Return to the merchant</a></p>`
    : html`<p class="muted">Card: 4242 4242 4242 4242 (test card, nothing is charged)</p>
<form method="post" action="/_processor/checkout/${cs._id}/pay"><button type="submit">Pay $${dollars(cs.amount_cents)}</button></form>
<p><a href="${cs.cancel_url}">Cancel and return</a></p>`}
</main></body></html>`.value;
  });

  router.post('/_processor/checkout/:id/pay', async (ctx) => {
    const cs = await processor.pay(ctx.params.id, deliver);
    ctx.redirect(cs.success_url);
  });
}
