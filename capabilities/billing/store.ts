import { Schema, type Connection, type Model } from 'mongoose';
import { docOptions, modelOn } from '../../platform/mongo';

/**
 * The gateway's own record of a top-up: the source of truth for what was
 * asked, what was credited and what was taken back (a processor's events only
 * point at it; stripe-mock, being stateless, could not be one anyway).
 */
export interface TopUpDoc {
  _id: string;
  account_id: string;
  amount_nano: number;
  amount_cents: number;
  currency: 'usd';
  processor: 'stripe' | 'stand-in';
  /** The processor's checkout session; null until it is opened. */
  session_id: string | null;
  url: string | null;
  status: 'creating' | 'pending' | 'paid' | 'failed';
  /** Who asked: `key:<id>` or `user:<id>` / `operator`. */
  created_by: string;
  created_at: Date;
  paid_at: Date | null;
  /** The PaymentIntent of the paid session: refunds and disputes are matched by it. */
  payment_intent: string | null;
  /** The charge's cumulative refunded amount already debited, in cents. */
  refunded_cents: number;
  /** Disputes already debited, by dispute id (amount in cents). */
  disputes: Record<string, number>;
}

/** One processor event, recorded once by its id (the insert is the dedupe: E11000 = seen before). */
export interface PaymentEventDoc {
  _id: string;
  type: string;
  topup_id: string | null;
  outcome: string;
  received_at: Date;
}

const TopUpSchema = new Schema<TopUpDoc>(
  {
    _id: String, account_id: { type: String, index: true }, amount_nano: Number, amount_cents: Number, currency: String, processor: String,
    session_id: { type: String, default: null, index: true }, url: { type: String, default: null }, status: String, created_by: String,
    created_at: Date, paid_at: { type: Date, default: null }, payment_intent: { type: String, default: null, index: true },
    refunded_cents: { type: Number, default: 0 }, disputes: { type: Schema.Types.Mixed, default: {} },
  },
  { ...docOptions, minimize: false },
);

const PaymentEventSchema = new Schema<PaymentEventDoc>(
  { _id: String, type: String, topup_id: { type: String, default: null }, outcome: String, received_at: Date },
  docOptions,
);

export interface BillingModels {
  TopUp: Model<TopUpDoc>;
  PaymentEvent: Model<PaymentEventDoc>;
}

/** The billing collections on a connection (registered on first use). */
export function billingModels(conn: Connection): BillingModels {
  return {
    TopUp: modelOn(conn, 'TopUp', TopUpSchema, 'topups'),
    PaymentEvent: modelOn(conn, 'PaymentEvent', PaymentEventSchema, 'payment_events'),
  };
}

/** Billing's Redis key names. */
export const billingRedisKeys = {
  /** Held while one event of a top-up is handled (capabilities/billing/billing.ts `locked`). */
  topUpLock: (topUpId: string) => `topuplock:${topUpId}`,
};
