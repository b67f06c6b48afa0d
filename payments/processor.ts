import { Schema, type Model } from 'mongoose';
import type { Db } from '../infra/mongo';
import { newId } from '../infra/ids';
import { GatewayError } from '../domain/errors';
import { signPayload, SIGNATURE_HEADER } from './signature';

/** A checkout session as the processor keeps it (Stripe's `checkout.session`). */
export interface CheckoutDoc {
  _id: string;
  amount_nano: number;
  currency: 'usd';
  /** What the merchant attached: the account to credit. */
  metadata: { account_id: string };
  success_url: string;
  cancel_url: string;
  status: 'open' | 'complete';
  created_at: Date;
  completed_at: Date | null;
}

const CheckoutSchema = new Schema<CheckoutDoc>(
  {
    _id: String, amount_nano: Number, currency: String, metadata: Schema.Types.Mixed, success_url: String, cancel_url: String,
    status: String, created_at: Date, completed_at: { type: Date, default: null },
  },
  { versionKey: false, _id: false, minimize: false },
);

/**
 * The payment-processor stand-in: it hosts checkout sessions, "charges" the
 * test card when the payer confirms on its checkout page, and then posts a
 * signed `checkout.session.completed` event to the merchant's webhook, as
 * Stripe Checkout does. It knows nothing of wallets: crediting is the
 * merchant's job (services/billing.ts), done from the webhook alone.
 */
export class ProcessorStandIn {
  private readonly model: Model<CheckoutDoc>;

  constructor(db: Db, private readonly secret: string) {
    this.model = (db.conn.models.ProcessorCheckout as Model<CheckoutDoc> | undefined)
      ?? db.conn.model<CheckoutDoc>('ProcessorCheckout', CheckoutSchema, 'processor_checkouts');
  }

  async createSession(input: { amountNano: number; accountId: string; successUrl: string; cancelUrl: string }): Promise<CheckoutDoc> {
    const doc: CheckoutDoc = {
      _id: newId('cs'), amount_nano: input.amountNano, currency: 'usd', metadata: { account_id: input.accountId },
      success_url: input.successUrl, cancel_url: input.cancelUrl, status: 'open', created_at: new Date(), completed_at: null,
    };
    await this.model.create(doc);
    return doc;
  }

  async get(id: string): Promise<CheckoutDoc> {
    const doc = await this.model.findById(id).lean<CheckoutDoc>();
    if (!doc) throw new GatewayError('not_found', `no checkout session ${id}`, { status: 404, type: 'invalid_request_error' });
    return doc;
  }

  /** The event body the processor sends for a completed session. */
  completedEvent(doc: CheckoutDoc): string {
    return JSON.stringify({
      id: `evt_${doc._id}`,
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: doc._id, amount_total: doc.amount_nano, currency: doc.currency, metadata: doc.metadata, payment_status: 'paid' } },
    });
  }

  /**
   * The payer confirmed: mark the session paid, then deliver the signed
   * event to the webhook (3 tries). Delivering twice is harmless: the
   * merchant credits each session once.
   */
  async pay(id: string, webhookUrl: string): Promise<CheckoutDoc> {
    const doc = await this.get(id);
    if (doc.status === 'open') await this.model.updateOne({ _id: id }, { $set: { status: 'complete', completed_at: new Date() } });
    const body = this.completedEvent(doc);
    let last = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const res = await fetch(webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signPayload(this.secret, body) },
          body,
        });
        if (res.ok) return { ...doc, status: 'complete' };
        last = `webhook answered ${res.status}: ${await res.text()}`;
      } catch (err) {
        last = err instanceof Error ? err.message : String(err);
      }
      await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
    }
    throw new GatewayError('upstream_error', `payment taken but the webhook failed: ${last}`);
  }
}
