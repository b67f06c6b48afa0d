/**
 * The one narrow interface between the gateway's billing (capabilities/billing/billing.ts)
 * and a payment processor: create a hosted checkout for one top-up. Events
 * come back the Stripe way (a signed POST to /webhooks/stripe, checked with
 * the SDK's constructEvent), from Stripe itself or from the development
 * stand-in (dev/simulator/payments/), which signs the same events the same way.
 *
 * Implementations: `StripeProcessor` (capabilities/billing/stripe.ts, production) and
 * `StandInProcessor` (dev/simulator/payments/stand-in.ts, development and test
 * only: never built in production).
 */
export interface CheckoutRequest {
  /** The gateway's own top-up id: `client_reference_id` and metadata of the session. */
  topUpId: string;
  accountId: string;
  /** Whole US cents (the gateway refuses amounts with fractions of a cent). */
  amountCents: number;
  successUrl: string;
  cancelUrl: string;
}

export interface CheckoutCreated {
  /** The processor's session id (`cs_...`). */
  sessionId: string;
  /** Where the payer goes to pay. */
  url: string;
}

export interface PaymentProcessor {
  readonly name: 'stripe' | 'stand-in';
  createCheckout(req: CheckoutRequest): Promise<CheckoutCreated>;
}
