import type { Db, LedgerDoc, LedgerKind, UsageDoc } from '../infra/mongo';
import type { Logger } from '../infra/logger';
import { BatchInserter, insertIgnoringDuplicates } from '../infra/batch-insert';
import { rkeys, type RedisClient } from '../infra/redis';
import { LedgerJournal } from './ledger-journal';

/** Op markers outlive any retry window of activities and clients. */
const MARKER_TTL_S = 8 * 24 * 3600;

export interface LedgerOp {
  /** Deterministic: `{requestId}:charge`, `{taskId}:reserve`, ... Applying it twice is a no-op. */
  opId: string;
  accountId: string;
  keyId?: string | null;
  kind: LedgerKind;
  /** Signed nano added to the balance (negative for charges and holds). */
  amountNano: number;
  /** Signed nano added to the key's spend. */
  keySpendNano?: number;
  ref?: string | null;
}

export interface ApplyResult {
  status: 'applied' | 'duplicate' | 'refused';
  balanceNano: number;
  keySpendNano: number;
}

/**
 * The wallet: the Mongo ledger is the record of truth (append-only, one
 * document per op id, a duplicate insert is a no-op); Redis holds the
 * projection (balance per account, spend per key) changed only by a Lua
 * script that applies each op id once. Gated ops (reservations, pre-checks)
 * decide in Redis first, then record; ungated ops record first, then project,
 * so a crash between the two is healed by retrying the same op.
 * Written-ahead ops (chat charges, `applyAhead`) move the projection and
 * append to the ledger journal in one script; the journal is drained to the
 * ledger in batches (services/ledger-journal.ts).
 */
export class Wallet {
  private readonly ledger: BatchInserter<LedgerDoc>;
  readonly journal: LedgerJournal;

  constructor(private readonly db: Db, private readonly redis: RedisClient, log?: Logger) {
    this.ledger = new BatchInserter<LedgerDoc>(() => db.Ledger.collection as never);
    this.journal = new LedgerJournal(db, redis, log);
  }

  /**
   * An ungated op written ahead: the projection moves and the op (with the
   * usage row of its call, when given) enters the journal in one atomic
   * script, so once this resolves the op survives this process. A replay of
   * the op id changes nothing and appends nothing. With a gate (media
   * reservations) the op is refused, and nothing appended, when it does not fit.
   */
  async applyAhead(op: LedgerOp, usage?: UsageDoc, gate?: { capNano: number | null }): Promise<ApplyResult> {
    const entry = this.journal.entry({ l: ledgerDoc(op), u: usage });
    const res = await this.project(op, !!gate, gate?.capNano ?? null, entry);
    if (res.status === 'applied') this.journal.kick();
    return res;
  }

  async apply(op: LedgerOp, gate?: { capNano: number | null }): Promise<ApplyResult> {
    if (gate) {
      const res = await this.project(op, true, gate.capNano);
      if (res.status === 'refused') return res;
      await this.record(op);
      return res;
    }
    // Record first, then project. The insert tells whether this call made the op: a projection loaded
    // from the ledger meanwhile already counts it (and answers 'duplicate'), yet it is this call's op.
    const inserted = await this.record(op);
    const res = await this.project(op, false, null);
    return inserted && res.status === 'duplicate' ? { ...res, status: 'applied' } : res;
  }

  /**
   * The fallback of `applyAhead` when Redis stays out: the ledger row and the
   * usage row go straight to Mongo (idempotent by id); the caller then
   * applies the op to the projection with `apply` once Redis is back.
   */
  async recordDirect(op: LedgerOp, usage: UsageDoc): Promise<void> {
    await this.record(op);
    await insertIgnoringDuplicates(this.db.Usage.collection as never, [usage]);
  }

  async balance(accountId: string): Promise<number> {
    const v = await this.redis.get(rkeys.balance(accountId));
    if (v !== null) return Number(v);
    await this.load(accountId);
    return Number(await this.redis.get(rkeys.balance(accountId)));
  }

  async keySpend(keyId: string): Promise<number> {
    return Number((await this.redis.get(rkeys.keySpend(keyId))) ?? 0);
  }

  /** Sum of the ledger for one account: the truth the projection must equal (journal entries written first). */
  async ledgerTotals(accountId: string): Promise<{ balanceNano: number; keySpend: Map<string, number>; recentOps: string[] }> {
    await this.journal.flush();
    let balanceNano = 0;
    const keySpend = new Map<string, number>();
    const recentOps: string[] = [];
    const since = Date.now() - MARKER_TTL_S * 1000;
    const cursor = this.db.Ledger.find({ account_id: accountId }, { amount_nano: 1, key_id: 1, key_spend_nano: 1, created_at: 1 })
      .lean()
      .cursor();
    for await (const e of cursor as AsyncIterable<Pick<LedgerDoc, '_id' | 'amount_nano' | 'key_id' | 'key_spend_nano' | 'created_at'>>) {
      balanceNano += e.amount_nano;
      if (e.key_id && e.key_spend_nano) keySpend.set(e.key_id, (keySpend.get(e.key_id) ?? 0) + e.key_spend_nano);
      if (e.created_at.getTime() >= since) recentOps.push(e._id);
    }
    return { balanceNano, keySpend, recentOps };
  }

  /** Build the projection from the ledger if Redis has none (first use, or Redis lost its data). */
  async load(accountId: string): Promise<void> {
    const { balanceNano, keySpend, recentOps } = await this.ledgerTotals(accountId);
    const spends = [...keySpend.entries()];
    await this.redis.walletLoad(
      1 + spends.length + recentOps.length,
      rkeys.balance(accountId),
      ...spends.map(([k]) => rkeys.keySpend(k)),
      ...recentOps.map((o) => rkeys.op(o)),
      balanceNano,
      spends.length,
      MARKER_TTL_S,
      ...spends.map(([, v]) => v),
    );
  }

  /** Operator repair: drop the projection and rebuild it from the ledger. */
  async rebuild(accountId: string, keyIds: string[]): Promise<void> {
    await this.redis.del(rkeys.balance(accountId), ...keyIds.map((k) => rkeys.keySpend(k)));
    await this.load(accountId);
  }

  /** Ledger rows are group-committed: one insertMany for concurrent ops, each awaited (a duplicate op id is a success). */
  private record(op: LedgerOp): Promise<boolean> {
    return this.ledger.insert(ledgerDoc(op));
  }

  private async project(op: LedgerOp, gate: boolean, capNano: number | null, journalEntry = ''): Promise<ApplyResult> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const [status, bal, spent] = await this.redis.walletApply(
        rkeys.balance(op.accountId),
        rkeys.op(op.opId),
        rkeys.keySpend(op.keyId ?? '-'),
        this.journal.key,
        op.amountNano,
        op.keySpendNano ?? 0,
        gate ? 1 : 0,
        capNano ?? -1,
        MARKER_TTL_S,
        journalEntry,
      );
      if (status === -2) {
        await this.load(op.accountId);
        continue;
      }
      const s = status === 1 ? 'applied' : status === 0 ? 'duplicate' : 'refused';
      return { status: s, balanceNano: Number(bal), keySpendNano: Number(spent) };
    }
    throw new Error(`wallet projection for ${op.accountId} could not be loaded`);
  }
}

function ledgerDoc(op: LedgerOp): LedgerDoc {
  return {
    _id: op.opId,
    account_id: op.accountId,
    key_id: op.keyId ?? null,
    kind: op.kind,
    amount_nano: op.amountNano,
    key_spend_nano: op.keySpendNano ?? 0,
    ref: op.ref ?? null,
    created_at: new Date(),
  };
}
