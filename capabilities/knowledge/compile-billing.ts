import pRetry, { type Options as RetryOptions } from 'p-retry';
import type { Catalogue, Model } from '../../domain/catalogue';
import { chatCharge, prechargeEstimate, type TokenUsage } from '../../domain/pricing';
import { usageToBill } from '../../domain/usage-estimate';
import type { Logger } from '../../platform/logger';
import type { Wallet, LedgerOp } from '../accounts/wallet';
import { usageDoc } from '../usage/usage';

/**
 * The LLM compiler's model calls are chat calls of the base's account and are
 * billed like any: the pre-charge gate before the call (the estimate of the
 * prompt and `max_tokens` must fit the balance), then a charge on the actual
 * usage (every pricing rule, the upstream's usage replaced by the estimate
 * when missing or implausible), written ahead with its usage row through the
 * wallet, as a chat settlement is. There is no key: the row has `key_id`
 * null and the endpoint `kb.compile`.
 *
 * Ids are deterministic per build and page (`{build}:{page}:compile`), so a
 * compile activity retried after a crash charges each page once, however
 * often the model was asked.
 */
export interface CompileBillingDeps {
  wallet: Wallet;
  catalogue: () => Catalogue;
  log: Logger;
}

export const COMPILE_USAGE_ENDPOINT = 'kb.compile';

/** The account cannot pay for the call: the page keeps the rules compiler's fields. */
export class CompileBalanceShort extends Error {
  constructor() {
    super('the account balance is too low for the compiler model');
    this.name = 'CompileBalanceShort';
  }
}

const AHEAD_RETRY: RetryOptions = { retries: 6, minTimeout: 100, factor: 2, maxTimeout: 2_000 };
const DIRECT_RETRY: RetryOptions = { retries: 8, minTimeout: 100, factor: 2, maxTimeout: 3_000 };

export class CompileBilling {
  constructor(private readonly deps: CompileBillingDeps, readonly accountId: string, readonly buildId: string) {}

  /** Throws CompileBalanceShort when the estimate of this call is above the account's balance. */
  async gate(model: Model, promptBytes: number, maxTokens: number): Promise<void> {
    const estimate = prechargeEstimate(model, this.deps.catalogue().pricingRules, promptBytes, maxTokens);
    if (estimate <= 0) return;
    const balance = await this.deps.wallet.balance(this.accountId);
    if (estimate > balance) throw new CompileBalanceShort();
  }

  /** Charge one answered call (its reported usage, or the estimate from the prompt and the answer). Returns the cost in nano. */
  async charge(call: { pageId: string; model: Model; reported: TokenUsage | null; promptBytes: number; outputChars: number; latencyMs: number }): Promise<number> {
    const billed = usageToBill({ reported: call.reported, outputChars: call.outputChars, promptBytes: call.promptBytes, completed: true });
    const usage = billed.usage;
    const cost = usage ? chatCharge(call.model, this.deps.catalogue().pricingRules, usage).costNano : 0;
    const id = `${this.buildId}:${call.pageId}:compile`;
    const row = usageDoc({
      _id: id, request_id: id, account_id: this.accountId, endpoint: COMPILE_USAGE_ENDPOINT, status: 'success', model: call.model.id,
      input_tokens: usage?.inputTokens ?? 0, output_tokens: usage?.outputTokens ?? 0, cached_tokens: usage?.cachedTokens ?? 0,
      unit_count: usage ? usage.inputTokens + usage.outputTokens : 0, unit_type: 'token', cost_nano: cost,
      latency_ms: Math.round(call.latencyMs), task_id: this.buildId, usage_estimated: billed.estimated,
    });
    const { wallet, log } = this.deps;
    if (cost === 0) {
      await pRetry(() => wallet.journal.append({ u: row }, this.accountId), AHEAD_RETRY);
      return 0;
    }
    const op: LedgerOp = { opId: id, accountId: this.accountId, keyId: null, kind: 'charge', amountNano: -cost, ref: this.buildId };
    // Not a chat charge: a compile retried by any worker must find it applied, so it goes through `apply`
    // (the ledger first, then the script's marker). `applyAhead` dedupes only on this process's ticket.
    const res = await pRetry(() => wallet.apply(op), DIRECT_RETRY);
    if (res.status === 'duplicate') log.info('compile charge already applied', { build: this.buildId, op: op.opId });
    await pRetry(() => wallet.journal.append({ u: row }, this.accountId), AHEAD_RETRY);
    return cost;
  }
}
