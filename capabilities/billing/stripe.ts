import Stripe from 'stripe';
import { GatewayError } from '../../domain/errors';
import type { CheckoutCreated, CheckoutRequest, PaymentProcessor } from './processor';

/** The Stripe client; `apiUrl` points it at another host (stripe-mock in tests and development). */
export function stripeClient(secretKey: string, apiUrl?: string): Stripe {
  const target = apiUrl ? new URL(apiUrl) : undefined;
  return new Stripe(secretKey, {
    maxNetworkRetries: 2, // safe: every create carries an idempotency key
    timeout: 20_000,
    appInfo: { name: 'model-gateway' },
    ...(target
      ? {
          host: target.hostname,
          port: target.port || (target.protocol === 'https:' ? 443 : 80),
          protocol: target.protocol === 'https:' ? 'https' : 'http',
        }
      : {}),
  });
}

/** Stripe Checkout: one line item of the top-up's amount, in USD, paid once. */
export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe' as const;

  constructor(private readonly stripe: Stripe) {}

  async createCheckout(req: CheckoutRequest): Promise<CheckoutCreated> {
    const metadata = { topup_id: req.topUpId, account_id: req.accountId };
    let session: Stripe.Checkout.Session;
    try {
      session = await this.stripe.checkout.sessions.create(
        {
          mode: 'payment',
          client_reference_id: req.topUpId,
          metadata,
          // Copied onto the PaymentIntent and its charge: refunds and disputes name the top-up too.
          payment_intent_data: { metadata },
          line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: req.amountCents, product_data: { name: 'Model Gateway credits' } } }],
          success_url: req.successUrl,
          cancel_url: req.cancelUrl,
        },
        // The same top-up never opens two sessions, however often this is retried.
        { idempotencyKey: `checkout:${req.topUpId}` },
      );
    } catch (err) {
      throw new GatewayError('upstream_error', `the payment processor did not open a checkout: ${err instanceof Error ? err.message : String(err)}`, { status: 502, cause: err });
    }
    if (!session.url) throw new GatewayError('upstream_error', 'the payment processor opened a checkout without a URL', { status: 502 });
    return { sessionId: session.id, url: session.url };
  }
}

/**
 * A webhook delivery checked with the SDK (`constructEvent` on the raw body,
 * 5 minutes' tolerance). Anything wrong (no header, a forged or stale
 * signature, a body that is no event) is a 400 and changes nothing.
 */
export function verifyStripeEvent(rawBody: Buffer, signature: string | undefined, secret: string): Stripe.Event {
  if (!signature) throw new GatewayError('invalid_request', 'missing Stripe-Signature header', { status: 400, param: 'stripe-signature' });
  try {
    return Stripe.webhooks.constructEvent(rawBody, signature, secret);
  } catch (err) {
    throw new GatewayError('invalid_request', `the event's signature does not verify: ${err instanceof Error ? err.message : String(err)}`, { status: 400, param: 'stripe-signature' });
  }
}

/** A signed Stripe-Signature header for `payload` (the stand-in's events; tests). */
export function signStripePayload(payload: string, secret: string, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp === undefined ? {} : { timestamp }) });
}
