import type Stripe from 'stripe';
import { z } from 'zod';
import { formatCredits } from '../../domain/money';
import { GatewayError } from '../../domain/errors';
import type { PaymentProcessor } from './processor';
import { billingModels, billingRedisKeys, type BillingModels, type TopUpDoc } from './store';
import { assertPaymentAmount, type AccountService } from '../accounts/accounts';
import { isDuplicateKey } from '../../platform/mongo';
import type { MongoConn } from '../../platform/mongo';
import type { AccountModels } from '../accounts/store';
import type { RedisClient } from '../../platform/redis';
import type { Wallet } from '../accounts/wallet';
import { newId } from '../../platform/ids';
import { withLock } from '../../platform/lock';

/** 1 US cent in nano-credits (1 credit = 1 USD = 10^9 nano). */
export const NANO_PER_CENT = 10_000_000;

/** How long the events of one top-up wait for each other (Stripe retries a 5xx later anyway). */
const TOPUP_LOCK_WAIT_MS = 30_000;

const idOf = z.union([z.string(), z.object({ id: z.string() })]).nullable().optional().transform((v) => (v == null ? null : typeof v === 'string' ? v : v.id));
const Metadata = z.record(z.string(), z.string()).nullable().optional().transform((v) => v ?? {});

/** The fields of the three event objects billing reads (zod at the webhook boundary). */
const CheckoutSessionObject = z.object({
  id: z.string().min(1),
  client_reference_id: z.string().nullable().optional(),
  metadata: Metadata,
  payment_status: z.string(),
  amount_total: z.number().int().nullable().optional(),
  currency: z.string().nullable().optional(),
  payment_intent: idOf,
});
const ChargeObject = z.object({
  id: z.string().min(1),
  amount: z.number().int().nonnegative(),
  amount_refunded: z.number().int().nonnegative(),
  payment_intent: idOf,
  metadata: Metadata,
});
const DisputeObject = z.object({
  id: z.string().min(1),
  amount: z.number().int().nonnegative(),
  charge: idOf,
  payment_intent: idOf,
});

export interface CheckoutAnswer {
  id: string;
  url: string;
  amount_usd: string;
  status: 'pending';
  session_id: string;
}

export interface EventOutcome {
  /** What the event did: credited, debited, nothing (and why). */
  outcome: string;
  topup_id?: string;
  /** This event id was recorded before: a redelivery. */
  duplicate?: boolean;
  balance_usd?: string;
}

/**
 * Top-ups through the payment processor (docs/payments.md). A top-up is the
 * gateway's own record first (`topups`), then a checkout session at the
 * processor; only a signed event credits it, through the wallet's idempotent
 * op `<account>:topup:<top-up id>`, so a replayed or duplicated event credits
 * nothing twice. Refunds and disputes debit the amount taken back, once each
 * (the balance may go negative: the next billable request is then refused).
 * The events of one top-up are handled one at a time under a Redis lock
 * (FerretDB has no atomic read-modify-write), and every event id is recorded
 * once (`payment_events`, a unique insert).
 */
export class BillingService {
  readonly store: BillingModels;

  constructor(
    private readonly processor: PaymentProcessor | null,
    private readonly accounts: AccountService,
    private readonly wallet: Wallet,
    private readonly redis: RedisClient,
    private readonly db: AccountModels & MongoConn,
    private readonly publicBaseUrl: string,
  ) {
    this.store = billingModels(db.conn);
  }

  get enabled(): boolean {
    return this.processor !== null;
  }

  private requireProcessor(): PaymentProcessor {
    if (!this.processor) throw new GatewayError('not_found', 'top-ups are not enabled on this gateway', { status: 404, type: 'invalid_request_error' });
    return this.processor;
  }

  /** A new top-up and its checkout session; the payer pays at `url`. */
  async startCheckout(accountId: string, amountNano: number, createdBy: string): Promise<CheckoutAnswer> {
    const processor = this.requireProcessor();
    assertPaymentAmount(amountNano);
    if (amountNano % NANO_PER_CENT !== 0) {
      throw new GatewayError('invalid_request', 'amount_usd must be a whole number of cents (at most 2 decimals)', { param: 'amount_usd' });
    }
    await this.accounts.get(accountId);
    // Refused before the payer pays: once paid, the credit cannot be refused.
    await this.accounts.assertRoomFor(accountId, amountNano);
    const doc: TopUpDoc = {
      _id: newId('topup'), account_id: accountId, amount_nano: amountNano, amount_cents: amountNano / NANO_PER_CENT, currency: 'usd',
      processor: processor.name, session_id: null, url: null, status: 'creating', created_by: createdBy, created_at: new Date(), paid_at: null,
      payment_intent: null, refunded_cents: 0, disputes: {},
    };
    await this.store.TopUp.create(doc);
    let created;
    try {
      created = await processor.createCheckout({
        topUpId: doc._id, accountId, amountCents: doc.amount_cents,
        successUrl: `${this.publicBaseUrl}/console/topup?topup=${doc._id}`,
        cancelUrl: `${this.publicBaseUrl}/console/topup?cancelled=${doc._id}`,
      });
    } catch (err) {
      await this.store.TopUp.updateOne({ _id: doc._id }, { $set: { status: 'failed' } }).catch(() => undefined);
      throw err;
    }
    await this.store.TopUp.updateOne({ _id: doc._id, status: 'creating' }, { $set: { session_id: created.sessionId, url: created.url, status: 'pending' } });
    return { id: doc._id, url: created.url, amount_usd: formatCredits(amountNano), status: 'pending', session_id: created.sessionId };
  }

  async topUp(accountId: string, id: string): Promise<TopUpDoc> {
    const doc = await this.store.TopUp.findById(id).lean<TopUpDoc>();
    if (!doc || doc.account_id !== accountId) throw new GatewayError('not_found', `no top-up ${id}`, { status: 404, type: 'invalid_request_error' });
    return doc;
  }

  /** Whether the top-up has been credited to the account (the ledger holds its op). */
  async isCredited(accountId: string, topUpId: string): Promise<boolean> {
    return (await this.db.Ledger.exists({ _id: creditOpId(accountId, topUpId) })) !== null;
  }

  /** One verified event (capabilities/billing/stripe.ts verifyStripeEvent): what it changed, once. */
  async handleEvent(event: Stripe.Event): Promise<EventOutcome> {
    const seen = await this.store.PaymentEvent.findById(event.id).lean();
    if (seen) return { outcome: seen.outcome, topup_id: seen.topup_id ?? undefined, duplicate: true };
    const result = await this.dispatch(event);
    try {
      await this.store.PaymentEvent.create({ _id: event.id, type: event.type, topup_id: result.topup_id ?? null, outcome: result.outcome, received_at: new Date() });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return { ...result, duplicate: true };
    }
    return result;
  }

  private async dispatch(event: Stripe.Event): Promise<EventOutcome> {
    const object = (event.data as { object?: unknown } | undefined)?.object;
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return this.paid(parse(CheckoutSessionObject, object, event.type));
      case 'checkout.session.async_payment_failed':
      case 'checkout.session.expired':
        return this.unpaid(parse(CheckoutSessionObject, object, event.type));
      case 'charge.refunded':
        return this.refunded(parse(ChargeObject, object, event.type));
      case 'charge.dispute.created':
        return this.disputed(parse(DisputeObject, object, event.type));
      default:
        return { outcome: 'ignored: unhandled event type' };
    }
  }

  private async bySession(s: z.infer<typeof CheckoutSessionObject>): Promise<TopUpDoc | null> {
    const id = s.client_reference_id || s.metadata.topup_id;
    const doc = id
      ? await this.store.TopUp.findById(id).lean<TopUpDoc>()
      : await this.store.TopUp.findOne({ session_id: s.id }).lean<TopUpDoc>();
    // A session of another top-up naming this one (or a forged reference) is not this top-up's payment.
    if (doc && doc.session_id && doc.session_id !== s.id) return null;
    return doc;
  }

  private async byPayment(paymentIntent: string | null, metadata: Record<string, string> = {}): Promise<TopUpDoc | null> {
    if (metadata.topup_id) {
      const doc = await this.store.TopUp.findById(metadata.topup_id).lean<TopUpDoc>();
      if (doc && (!doc.payment_intent || !paymentIntent || doc.payment_intent === paymentIntent)) return doc;
    }
    return paymentIntent ? this.store.TopUp.findOne({ payment_intent: paymentIntent }).lean<TopUpDoc>() : null;
  }

  private locked<T>(topUpId: string, fn: (doc: TopUpDoc) => Promise<T>): Promise<T> {
    const busy = () => new GatewayError('internal_error', 'another event of this top-up is being handled; deliver again', { headers: { 'retry-after': '1' } });
    return withLock(this.redis, billingRedisKeys.topUpLock(topUpId), { waitMs: TOPUP_LOCK_WAIT_MS, busy }, async () => {
      const doc = await this.store.TopUp.findById(topUpId).lean<TopUpDoc>();
      if (!doc) throw new Error(`top-up ${topUpId} vanished`);
      return fn(doc);
    });
  }

  /** checkout.session.completed (paid) or async_payment_succeeded: credit the top-up's amount, once. */
  private async paid(s: z.infer<typeof CheckoutSessionObject>): Promise<EventOutcome> {
    if (s.payment_status !== 'paid') return { outcome: `waiting: payment_status ${s.payment_status}` };
    const found = await this.bySession(s);
    if (!found) return { outcome: 'ignored: unknown top-up' };
    // Already credited (the ledger row is written before the record says paid): no need to queue for the lock.
    if (found.status === 'paid' && (await this.db.Ledger.exists({ _id: creditOpId(found.account_id, found._id) })) !== null) {
      return { outcome: 'already credited', topup_id: found._id };
    }
    return this.locked(found._id, async (doc) => {
      // Our record says what was asked; the processor charged that line item (no discounts, fixed quantity).
      const result = await this.accounts.topUp(doc.account_id, doc.amount_nano, doc._id);
      if (doc.status !== 'paid') {
        await this.store.TopUp.updateOne({ _id: doc._id }, { $set: { status: 'paid', paid_at: new Date(), session_id: doc.session_id ?? s.id, payment_intent: s.payment_intent ?? doc.payment_intent } });
      } else if (!doc.payment_intent && s.payment_intent) {
        await this.store.TopUp.updateOne({ _id: doc._id }, { $set: { payment_intent: s.payment_intent } });
      }
      return { outcome: result.status === 'duplicate' ? 'already credited' : 'credited', topup_id: doc._id, balance_usd: formatCredits(result.balanceNano) };
    });
  }

  private async unpaid(s: z.infer<typeof CheckoutSessionObject>): Promise<EventOutcome> {
    const found = await this.bySession(s);
    if (!found) return { outcome: 'ignored: unknown top-up' };
    return this.locked(found._id, async (doc) => {
      if (doc.status === 'pending') await this.store.TopUp.updateOne({ _id: doc._id }, { $set: { status: 'failed' } });
      return { outcome: doc.status === 'paid' ? 'ignored: already paid' : 'not paid', topup_id: doc._id };
    });
  }

  /** charge.refunded: `amount_refunded` is cumulative; what is new since the last refund is debited. */
  private async refunded(c: z.infer<typeof ChargeObject>): Promise<EventOutcome> {
    const found = await this.byPayment(c.payment_intent, c.metadata);
    if (!found) return { outcome: 'ignored: unknown top-up' };
    if (Math.min(c.amount_refunded, found.amount_cents - disputedCents(found)) <= found.refunded_cents) return { outcome: 'already debited', topup_id: found._id };
    return this.locked(found._id, async (doc) => {
      const target = Math.min(c.amount_refunded, doc.amount_cents - disputedCents(doc));
      if (target <= doc.refunded_cents) return { outcome: 'already debited', topup_id: doc._id };
      const cents = target - doc.refunded_cents;
      const result = await this.wallet.apply({
        opId: `${creditOpId(doc.account_id, doc._id)}:refund:${target}`, accountId: doc.account_id, kind: 'adjust', amountNano: -cents * NANO_PER_CENT, ref: doc._id,
      });
      await this.store.TopUp.updateOne({ _id: doc._id }, { $set: { refunded_cents: target, ...(doc.payment_intent || !c.payment_intent ? {} : { payment_intent: c.payment_intent }) } });
      return { outcome: `debited ${formatCredits(cents * NANO_PER_CENT)} (refund)`, topup_id: doc._id, balance_usd: formatCredits(result.balanceNano) };
    });
  }

  /** charge.dispute.created: the disputed amount is taken back now (a won dispute is credited by hand). */
  private async disputed(d: z.infer<typeof DisputeObject>): Promise<EventOutcome> {
    const found = await this.byPayment(d.payment_intent);
    if (!found) return { outcome: 'ignored: unknown top-up' };
    if (found.disputes?.[d.id] !== undefined) return { outcome: 'already debited', topup_id: found._id };
    return this.locked(found._id, async (doc) => {
      if (doc.disputes[d.id] !== undefined) return { outcome: 'already debited', topup_id: doc._id };
      const cents = Math.max(0, Math.min(d.amount, doc.amount_cents - doc.refunded_cents - disputedCents(doc)));
      const result = await this.wallet.apply({
        opId: `${creditOpId(doc.account_id, doc._id)}:dispute:${d.id}`, accountId: doc.account_id, kind: 'adjust', amountNano: -cents * NANO_PER_CENT, ref: doc._id,
      });
      await this.store.TopUp.updateOne({ _id: doc._id }, { $set: { [`disputes.${d.id}`]: cents } });
      return { outcome: `debited ${formatCredits(cents * NANO_PER_CENT)} (dispute)`, topup_id: doc._id, balance_usd: formatCredits(result.balanceNano) };
    });
  }
}

/** The wallet op of a top-up's credit (capabilities/accounts/accounts.ts topUp): derived from the top-up id alone. */
export function creditOpId(accountId: string, topUpId: string): string {
  return `${accountId}:topup:${topUpId}`;
}

function disputedCents(doc: TopUpDoc): number {
  return Object.values(doc.disputes ?? {}).reduce((a, b) => a + b, 0);
}

function parse<T extends z.ZodTypeAny>(schema: T, object: unknown, type: string): z.infer<T> {
  const r = schema.safeParse(object);
  if (!r.success) throw new GatewayError('invalid_request', `the ${type} event's object is not what Stripe sends: ${r.error.issues.map((i) => `${i.path.join('../accounts')}: ${i.message}`).join('; ')}`, { status: 400 });
  return r.data;
}
