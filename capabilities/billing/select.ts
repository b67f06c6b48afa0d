import { createHmac } from 'node:crypto';
import { publicBaseUrl, type Config } from '../../platform/config';
import type { MongoConn } from '../../platform/mongo';
import type { PaymentProcessor } from './processor';
import { StripeProcessor } from './stripe';
import { StandInProcessor } from '../../dev/simulator/payments/stand-in';

type PaymentsConfig = Pick<Config, 'DEPLOYMENT_MODE' | 'TOPUPS_ENABLED' | 'STRIPE_SECRET_KEY' | 'STRIPE_WEBHOOK_SECRET' | 'STRIPE_API_URL' | 'PUBLIC_BASE_URL' | 'HOST' | 'PORT' | 'ADMIN_TOKEN'>;

/**
 * The secret webhook events are verified with: STRIPE_WEBHOOK_SECRET; in
 * development and test without it, one derived from ADMIN_TOKEN (the stand-in
 * signs with the same). Production never derives one: null, and the gateway
 * refuses to start with top-ups on (platform/config.ts paymentsConfigProblem).
 */
export function webhookSecret(config: PaymentsConfig): string | null {
  if (config.STRIPE_WEBHOOK_SECRET) return config.STRIPE_WEBHOOK_SECRET;
  if (config.DEPLOYMENT_MODE === 'production') return null;
  return `whsec_${createHmac('sha256', config.ADMIN_TOKEN).update('payment-webhook').digest('hex')}`;
}

export interface Payments {
  /** Null: top-ups are off (TOPUPS_ENABLED=false, or production without Stripe keys). */
  processor: PaymentProcessor | null;
  /** The development stand-in, when it is the processor (never in production). */
  standIn: StandInProcessor | null;
  webhookSecret: string | null;
}

/** Stripe when STRIPE_SECRET_KEY is set; else, in development and test only, the stand-in. */
export function selectPayments(config: PaymentsConfig, db: MongoConn): Payments {
  const secret = webhookSecret(config);
  if (!config.TOPUPS_ENABLED || !secret) return { processor: null, standIn: null, webhookSecret: secret };
  if (config.STRIPE_SECRET_KEY) {
    return { processor: new StripeProcessor(config.STRIPE_SECRET_KEY, config.STRIPE_API_URL), standIn: null, webhookSecret: secret };
  }
  if (config.DEPLOYMENT_MODE === 'production') return { processor: null, standIn: null, webhookSecret: secret };
  const standIn = new StandInProcessor(db, publicBaseUrl(config), secret);
  return { processor: standIn, standIn, webhookSecret: secret };
}
