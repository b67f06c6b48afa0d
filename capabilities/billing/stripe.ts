import { createHmac } from 'node:crypto';
import type Stripe from 'stripe';
import { GatewayError } from '../../domain/errors';
import type { CheckoutCreated, CheckoutRequest, PaymentProcessor } from './processor';

let sdk: Promise<typeof Stripe> | null = null;

/**
 * The official SDK, loaded on first use (a checkout or a webhook event): about 15-20 MB of a process's
 * memory that a gateway serving no payment never needs (issue 25, the gateway's RSS).
 */
function loadStripe(): Promise<typeof Stripe> {
  sdk ??= import('stripe').then((m) => m.default);
  return sdk;
}

/** The Stripe client; `apiUrl` points it at another host (stripe-mock in tests and development). */
export async function stripeClient(secretKey: string, apiUrl?: string): Promise<Stripe> {
  const target = apiUrl ? new URL(apiUrl) : undefined;
  const StripeSdk = await loadStripe();
  return new StripeSdk(secretKey, {
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

  private client: Promise<Stripe> | null = null;

  /** The client is made on the first checkout. */
  constructor(private readonly secretKey: string, private readonly apiUrl?: string) {}

  private get stripe(): Promise<Stripe> {
    this.client ??= stripeClient(this.secretKey, this.apiUrl);
    return this.client;
  }

  async createCheckout(req: CheckoutRequest): Promise<CheckoutCreated> {
    const stripe = await this.stripe;
    const metadata = { topup_id: req.topUpId, account_id: req.accountId };
    let session: Stripe.Checkout.Session;
    try {
      session = await stripe.checkout.sessions.create(
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
export async function verifyStripeEvent(rawBody: Buffer, signature: string | undefined, secret: string): Promise<Stripe.Event> {
  if (!signature) throw new GatewayError('invalid_request', 'missing Stripe-Signature header', { status: 400, param: 'stripe-signature' });
  const StripeSdk = await loadStripe();
  try {
    return StripeSdk.webhooks.constructEvent(rawBody, signature, secret);
  } catch (err) {
    throw new GatewayError('invalid_request', `the event's signature does not verify: ${err instanceof Error ? err.message : String(err)}`, { status: 400, param: 'stripe-signature' });
  }
}

/**
 * A signed Stripe-Signature header for `payload` (the stand-in's events; tests), as Stripe signs
 * (https://docs.stripe.com/webhooks#verify-manually: `t=<seconds>,v1=<hex HMAC-SHA256 of "t.payload">`).
 * Made here, not with the SDK's test helper, so the stand-in does not load the SDK; every signature is
 * checked by the SDK's own constructEvent (verifyStripeEvent), in the tests too.
 */
export function signStripePayload(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex')}`;
}
