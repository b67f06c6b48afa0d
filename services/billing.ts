import { z } from 'zod';
import { formatCredits } from '../domain/money';
import { GatewayError } from '../domain/errors';
import { signatureProblem } from '../payments/signature';
import type { ProcessorStandIn } from '../payments/processor';
import { assertTopUpAmount, type AccountService } from './accounts';
import type { Db } from '../infra/mongo';

const CompletedEvent = z.object({
  id: z.string(),
  type: z.string(),
  data: z.object({
    object: z.object({
      id: z.string().min(1),
      amount_total: z.number().int().positive(),
      metadata: z.object({ account_id: z.string().min(1) }),
      payment_status: z.string(),
    }),
  }),
});

/**
 * Top-ups through the payment processor: a checkout session carries the
 * amount (the 134.8 minimum is checked here and again at crediting) and the
 * account; only the processor's signed webhook credits the wallet, through
 * the account's idempotent top-up keyed by the session id, so a redelivered
 * event credits nothing more.
 */
export class BillingService {
  constructor(
    private readonly processor: ProcessorStandIn,
    private readonly accounts: AccountService,
    private readonly db: Db,
    private readonly webhookSecret: string,
  ) {}

  async startCheckout(accountId: string, amountNano: number, urls: { successUrl: string; cancelUrl: string }) {
    assertTopUpAmount(amountNano);
    await this.accounts.get(accountId);
    return this.processor.createSession({ amountNano, accountId, ...urls });
  }

  /** Handle one webhook delivery; returns what was credited (replayed: true when already credited). */
  async handleWebhook(rawBody: string, signature: string) {
    const problem = signatureProblem(this.webhookSecret, rawBody, signature);
    if (problem) throw new GatewayError('invalid_request', problem, { status: 400, param: 'signature' });
    let event: z.infer<typeof CompletedEvent>;
    try {
      event = CompletedEvent.parse(JSON.parse(rawBody));
    } catch {
      throw new GatewayError('invalid_request', 'the event is not a checkout session event', { status: 400 });
    }
    if (event.type !== 'checkout.session.completed' || event.data.object.payment_status !== 'paid') {
      return { handled: false as const, type: event.type };
    }
    const s = event.data.object;
    const result = await this.accounts.topUp(s.metadata.account_id, s.amount_total, s.id);
    return { handled: true as const, session: s.id, account_id: s.metadata.account_id, amount_usd: formatCredits(s.amount_total), replayed: result.status === 'duplicate', balance_usd: formatCredits(result.balanceNano) };
  }

  /** Whether the session has been credited to the account (the ledger holds the top-up op). */
  async isCredited(accountId: string, sessionId: string): Promise<boolean> {
    return (await this.db.Ledger.exists({ _id: `${accountId}:topup:${sessionId}` })) !== null;
  }
}
