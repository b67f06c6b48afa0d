import { type AccountDoc, type AccountModels, accountRedisKeys } from './store';
import { Signal } from '../../platform/signal';
import { type RedisClient } from '../../platform/redis';
import type { AccountRecord } from '../../domain/api-key';
import { newId } from '../../platform/ids';
import { GatewayError } from '../../domain/errors';
import { formatCredits, parseCredits } from '../../domain/money';
import type { Wallet } from './wallet';
import { changeRecord } from '../../platform/record-lock';

function accountStoreBusy(cause?: unknown): GatewayError {
  return new GatewayError('internal_error', 'the account change could not be confirmed (a store is briefly unavailable); retry the request', {
    headers: { 'retry-after': '1' }, cause,
  });
}

/** Signup grant and top-up minimum (spec 1 section 2.2). */
export const SIGNUP_GRANT_NANO = parseCredits('40.44');
export const TOPUP_MINIMUM_NANO = parseCredits('134.8');

/** The most one payment may be: Stripe's largest USD charge ($999,999.99), so an amount it would refuse is a 400 here, not a 502. */
export const TOPUP_MAXIMUM_NANO = parseCredits('999999.99');

/**
 * The largest balance the wallet keeps exact to the nano: amounts are nano-credits held as safe integers
 * (DESIGN.md, money), so a wallet above Number.MAX_SAFE_INTEGER nano (9007199.254740991 credits) would
 * round its balance away from its ledger. Money is refused at the door before it would pass this.
 */
export const BALANCE_MAXIMUM_NANO = Number.MAX_SAFE_INTEGER;

/** Room for `amountNano` more on a wallet holding `balanceNano`: else a 400 naming `amount_usd`. */
export function assertBalanceRoom(balanceNano: number, amountNano: number): void {
  if (amountNano > BALANCE_MAXIMUM_NANO - Math.max(0, balanceNano)) {
    throw new GatewayError('invalid_request', `amount_usd would take the balance above ${formatCredits(BALANCE_MAXIMUM_NANO)}, the most a wallet keeps exact to the nano`, { param: 'amount_usd' });
  }
}

/** The top-up minimum, checked when a payment starts and again when it is credited. */
export function assertTopUpAmount(amountNano: number): void {
  if (!Number.isSafeInteger(amountNano) || amountNano < TOPUP_MINIMUM_NANO) {
    throw new GatewayError('invalid_request', 'amount_usd is below the top-up minimum of 134.8', { param: 'amount_usd' });
  }
}

/** A payment's amount: the minimum, and the processor's largest charge (an operator's top-up has no processor). */
export function assertPaymentAmount(amountNano: number): void {
  assertTopUpAmount(amountNano);
  if (amountNano > TOPUP_MAXIMUM_NANO) {
    throw new GatewayError('invalid_request', 'amount_usd is above the largest single payment, 999999.99: pay in several top-ups', { param: 'amount_usd' });
  }
}

/**
 * The ids of the checkout's own top-ups (`topup_…`, capabilities/billing): their credit's op is
 * `<account>:topup:<top-up id>`, so an operator's reference must never take that form, or it would
 * stand for a payment's credit (which would then never land) or replay one.
 */
const CHECKOUT_REFERENCE = /^topup_/i;

/** How an operator adds money by hand: a top-up (the minimum applies) or a credit (any amount: a won dispute, goodwill). */
export type OperatorCredit = 'topup' | 'credit';

export function toAccountRecord(doc: AccountDoc): AccountRecord {
  return {
    id: doc._id,
    name: doc.name,
    status: doc.status,
    enterprise: doc.enterprise,
    rpm: doc.rate_limit?.rpm ?? null,
    concurrency: doc.rate_limit?.concurrency ?? null,
  };
}

export class AccountService {
  /** Every account whose record this process published (the auth lookup stops acting on its guesses). */
  readonly published = new Signal<string>();

  constructor(private readonly db: AccountModels, private readonly redis: RedisClient, private readonly wallet: Wallet) {}

  async create(input: { name: string; enterprise?: boolean; ownerUserId?: string }): Promise<AccountDoc> {
    const doc: AccountDoc = {
      _id: newId('acct'),
      name: input.name,
      status: 'active',
      enterprise: input.enterprise ?? false,
      rate_limit: { rpm: null, concurrency: null },
      owner_user_id: input.ownerUserId ?? null,
      created_at: new Date(),
    };
    await this.db.Account.create(doc);
    await this.publish(doc);
    await this.wallet.apply({ opId: `${doc._id}:grant`, accountId: doc._id, kind: 'grant', amountNano: SIGNUP_GRANT_NANO });
    return doc;
  }

  async get(id: string): Promise<AccountDoc> {
    const doc = await this.db.Account.findById(id).lean<AccountDoc>();
    if (!doc) throw new GatewayError('not_found', `no account ${id}`, { status: 404, type: 'invalid_request_error' });
    return doc;
  }

  /**
   * One change of an account (status, limits), acknowledged only once every
   * gateway judges by it, as a key change is (capabilities/accounts/keys.ts): changes of
   * one account run one at a time under a Redis lock, each on the document
   * as the previous one left it (a deactivation and a new rate limit sent
   * together both apply); Mongo, then the Redis record every request reads,
   * each retried for about 10 s. A change Redis cannot take is not
   * acknowledged (500 internal_error, Retry-After: 1) and is published again
   * once Redis is back.
   */
  async update(id: string, patch: { status?: AccountDoc['status']; rate_limit?: { rpm?: number | null; concurrency?: number | null } }) {
    return this.change(id, (doc) => ({
      ...doc,
      status: patch.status ?? doc.status,
      rate_limit: { ...doc.rate_limit, ...patch.rate_limit } as AccountDoc['rate_limit'],
    }));
  }

  private change(id: string, next: (doc: AccountDoc) => AccountDoc): Promise<AccountDoc> {
    return changeRecord({
      redis: this.redis, lockKey: accountRedisKeys.accountLock(id), busy: accountStoreBusy,
      read: () => this.get(id), save: (doc) => this.db.Account.replaceOne({ _id: id }, doc), publish: (doc) => this.publish(doc),
    }, next);
  }

  /** A top-up is a ledger op; the caller's op id (e.g. the payment id) makes it idempotent. */
  async topUp(id: string, amountNano: number, opId: string) {
    assertTopUpAmount(amountNano);
    await this.get(id);
    return this.wallet.apply({ opId: `${id}:topup:${opId}`, accountId: id, kind: 'topup', amountNano, ref: opId });
  }

  /**
   * Money an operator adds by hand (the admin API), applied once per `reference`: a `topup` (the
   * minimum applies; ledger kind topup) or a `credit` of any positive amount (ledger kind adjust, op
   * `<account>:credit:<reference>`). The same reference again is a replay of the same amount; with
   * another amount it is refused (409), never answered as if it had been applied.
   */
  async operatorCredit(id: string, amountNano: number, reference: string, as: OperatorCredit) {
    if (CHECKOUT_REFERENCE.test(reference)) {
      throw new GatewayError('invalid_request', 'a reference starting with topup_ names a checkout top-up, whose credit is the payment\'s own: choose another reference (to give back a disputed payment, POST /admin/v1/accounts/{id}/credits)', { param: 'reference' });
    }
    if (as === 'topup') assertTopUpAmount(amountNano);
    else if (!Number.isSafeInteger(amountNano) || amountNano <= 0) throw new GatewayError('invalid_request', 'amount_usd must be above 0', { param: 'amount_usd' });
    await this.get(id);
    const opId = as === 'topup' ? `${id}:topup:${reference}` : `${id}:credit:${reference}`;
    // A replay answers as before; new money must leave the wallet exact (BALANCE_MAXIMUM_NANO).
    if (!(await this.db.Ledger.exists({ _id: opId }))) await this.assertRoomFor(id, amountNano);
    const result = await this.wallet.apply({ opId, accountId: id, kind: as === 'topup' ? 'topup' : 'adjust', amountNano, ref: reference });
    if (result.status === 'duplicate') {
      const applied = await this.db.Ledger.findById(opId, { amount_nano: 1 }).lean<{ amount_nano: number }>();
      if (applied && applied.amount_nano !== amountNano) {
        throw new GatewayError('idempotency_key_reuse', `reference '${reference}' was already used for ${formatCredits(applied.amount_nano)}; a different amount needs another reference`, { status: 409, param: 'reference' });
      }
    }
    return result;
  }

  /**
   * Refuses (400) money that would take the wallet past BALANCE_MAXIMUM_NANO. Read, then checked: two new credits
   * racing could still pass it together, so it guards an operator's and a payer's own call, not a concurrent flood.
   */
  async assertRoomFor(id: string, amountNano: number): Promise<void> {
    assertBalanceRoom(await this.wallet.balance(id), amountNano);
  }

  /** The record a request is judged by: Redis first, rebuilt from Mongo when Redis has none. */
  async lookup(id: string): Promise<AccountRecord | null> {
    const cached = await this.redis.get(accountRedisKeys.account(id));
    if (cached) return JSON.parse(cached) as AccountRecord;
    const doc = await this.db.Account.findById(id).lean<AccountDoc>();
    return doc ? this.fill(doc) : null;
  }

  /**
   * A record rebuilt from Mongo on a miss is written only where none is: the
   * document was read before the write, so a change (`change`) that lands in
   * between must not be overwritten by the older state it read (a deactivated
   * account served again).
   */
  private async fill(doc: AccountDoc): Promise<AccountRecord> {
    const record = toAccountRecord(doc);
    await this.redis.set(accountRedisKeys.account(doc._id), JSON.stringify(record), 'NX');
    return record;
  }

  private async publish(doc: AccountDoc): Promise<AccountRecord> {
    const record = toAccountRecord(doc);
    await this.redis.set(accountRedisKeys.account(doc._id), JSON.stringify(record));
    this.published.emit(doc._id);
    return record;
  }
}
