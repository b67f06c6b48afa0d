import { randomBytes } from 'node:crypto';
import { Signal } from '../../platform/signal';
import { performance } from 'node:perf_hooks';
import { type AccountModels, type LedgerDoc, type LedgerKind, type WalletCheckpointDoc, accountRedisKeys } from './store';
import type { UsageModels, StoredUsage } from '../usage/store';
import type { Logger } from '../../platform/logger';
import { BatchInserter, insertIgnoringDuplicates } from '../../platform/batch-insert';
import { BatchExists } from '../../platform/batch-exists';
import { filtersByScan } from '../../platform/mongo';
import { sameShard, sendHot, type RedisClient } from '../../platform/redis';
import { walletOf } from '../../domain/api-key';
import { LedgerJournal, MARKER_AFTER_ROW_S } from './ledger-journal';
import { countWalletOp } from '../../platform/metrics/index';

/**
 * Dedupe windows (docs/wallet.md walks through each retry path):
 * - a non-chat op's marker lives while its ledger row may be missing (a day at
 *   most, normally milliseconds) and MARKER_AFTER_ROW_S after; past that the
 *   ledger row itself answers "already applied";
 * - a chat charge carries its writer's sequence number; the writer retries it
 *   for SEQ_GIVE_UP_MS at most, and its window on a wallet lives
 *   SEQ_WINDOW_TTL_MS after the writer's last op there.
 */
const MARKER_SAFETY_S = 24 * 3600;
export const SEQ_GIVE_UP_MS = 5 * 60_000;
export const SEQ_WINDOW_TTL_MS = 15 * 60_000;
/**
 * `applyMarkedAhead`: how long after a caller knew an op had no ledger row it
 * may skip reading the ledger (half the marker's life after its row: room for
 * a stalled process and clock drift).
 */
export const FRESH_OP_MS = (MARKER_AFTER_ROW_S * 1000) / 2;
/**
 * A checkpoint folds in rows recorded up to this long ago, never later ones: a
 * row stamped before the cut is visible in Mongo by then (an insert takes
 * milliseconds, clocks of the processes differ by far less than this).
 */
export const CHECKPOINT_MARGIN_MS = 5 * 60_000;
/**
 * A wallet gets a new checkpoint once this many of its rows were written (seen
 * by one process) since the last one, and whenever a projection load read this
 * many rows after the last one (the load's own pass folds them in: no second
 * read). On a store that reads the whole ledger for any query of it
 * (platform/mongo.ts filtersByScan: the embedded FerretDB) only the second: a
 * checkpoint there would scan every row of every wallet, under load, to save
 * a later load a scan it makes anyway (bench:chat on a ledger of ~150,000 rows:
 * two thirds of FerretDB's CPU went to those scans).
 */
export const CHECKPOINT_EVERY_ROWS = 10_000;

export interface LedgerOp {
  /** Deterministic: `{requestId}:charge`, `{taskId}:reserve`, ... Applying it twice is a no-op. */
  opId: string;
  /** The wallet the op moves (a key's `walletOf`). */
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
 * A chat charge's sequence number: every attempt to apply that charge (the
 * write-ahead retries, the direct-to-ledger fallback's projection step) sends
 * the same one. Close it once the charge has a definitive answer.
 */
export interface ChargeTicket {
  readonly writer: string;
  readonly seq: number;
  readonly issuedAt: number;
  close(): void;
}

/** Where the call's concurrency slot is, to free it in the settling script (same shard only). */
export interface LeaseRelease {
  accountId: string;
  member: string;
}

interface Projected extends ApplyResult {
  entryId: string;
}

/**
 * The wallet: the Mongo ledger is the record of truth (append-only, one
 * document per op id, a duplicate insert is a no-op); Redis holds the
 * projection (balance per wallet, spend per key) changed only by one Lua
 * script that applies each op once and writes it ahead to its shard's journal
 * in the same step. Redis keeps no per-op state for long:
 * - chat charges (`applyAhead`) dedupe on their writer's sequence numbers:
 *   a few numbers per writer and wallet, whatever the history;
 * - other ops (`apply`) ask the ledger first (a row exists only for an op the
 *   projection counts), then the script, whose marker covers the time until
 *   the row is written, plus a margin.
 * Projections rebuild from the wallet's last checkpoint and the rows after it.
 */
export class Wallet {
  private readonly ledger: BatchInserter<LedgerDoc>;
  /** Ledger existence checks of `applyMarkedAhead`, gathered per tick (one `{_id}` find per id). */
  private readonly ledgerHas: BatchExists<LedgerDoc>;
  readonly journal: LedgerJournal;
  /** This process's writer id for chat charge sequence numbers. */
  readonly writer = randomBytes(6).toString('hex');
  private nextSeq = 1;
  /** Open tickets, oldest first (Map keeps insertion order and numbers only grow). */
  private readonly open = new Map<number, number>();
  private readonly sinceCheckpoint = new Map<string, number>();
  private readonly checkpointing = new Set<string>();
  /** Figures for tests and metrics. */
  readonly stats = { lastLoadRows: 0, checkpoints: 0 };
  /**
   * Every op this process sends that takes money out of a wallet (a charge, a hold, a debit), as it is
   * sent (again on a retry), and every wallet whose projection a load replaced: the auth lookup's
   * guesses follow (capabilities/accounts/auth-lookup.ts).
   */
  readonly debits = new Signal<LedgerOp>();
  readonly reloads = new Signal<string>();

  constructor(private readonly db: AccountModels & UsageModels, private readonly redis: RedisClient, private readonly log?: Logger) {
    this.ledger = new BatchInserter<LedgerDoc>(() => db.Ledger.collection as never);
    this.ledgerHas = new BatchExists<LedgerDoc>(() => db.Ledger.collection as never);
    this.journal = new LedgerJournal(db, redis, log);
    this.journal.onRows = (rows) => this.countRows(rows);
  }

  /** A new sequence number for one chat charge. */
  ticket(): ChargeTicket {
    const seq = this.nextSeq++;
    const issuedAt = performance.now();
    this.open.set(seq, issuedAt);
    return { writer: this.writer, seq, issuedAt, close: () => void this.open.delete(seq) };
  }

  /** Every number below this is settled: answered, or given up and never sent again. */
  private floor(): number {
    const now = performance.now();
    for (const [seq, at] of this.open) {
      if (now - at <= SEQ_GIVE_UP_MS) return seq;
      this.open.delete(seq);
    }
    return this.nextSeq;
  }

  /**
   * A chat charge written ahead: the projection moves and the op (with the
   * usage row of its call, when given) enters the journal in one atomic
   * script, so once this resolves the op survives this process. A retry with
   * the same ticket changes nothing and appends nothing. `lease` frees the
   * call's concurrency slot in the same round trip.
   */
  async applyAhead(op: LedgerOp, usage?: StoredUsage, ticket?: ChargeTicket, lease?: LeaseRelease): Promise<ApplyResult> {
    const own = ticket ?? this.ticket();
    try {
      const entry = this.journal.entry({ l: ledgerDoc(op), u: usage });
      const res = await this.project(op, { ticket: own, entry, lease });
      if (res.status === 'applied') this.journal.kick(op.accountId);
      return strip(res);
    } finally {
      if (!ticket) own.close();
    }
  }

  /**
   * Any other op (grants, top-ups, holds, settlements, escrow moves): applied
   * once however often and from wherever it is retried. With `gate`, refused
   * when the balance would go below 0 or the key's spend above its cap.
   * An applied op resolves once its ledger row is written.
   */
  async apply(op: LedgerOp, gate?: { capNano: number | null }, ticket?: ChargeTicket): Promise<ApplyResult> {
    if (ticket) return strip(await this.project(op, { ticket, entry: '' }));
    // The ledger is the final arbiter: a row exists only for an op the projection already counts.
    if (await this.db.Ledger.exists({ _id: op.opId })) return { status: 'duplicate', ...(await this.read(op)) };
    const doc = ledgerDoc(op);
    const res = await this.project(op, { gate: gate ?? null, entry: this.journal.entry({ l: doc }) });
    // A duplicate writes nothing: the row is the applied op's (its caller's insert, or the journal drain's),
    // never this call's, which may differ in content under the same id.
    if (res.status !== 'applied') return strip(res);
    doc.recorded_at = new Date();
    if (await this.ledger.insert(doc)) this.countRows([doc]);
    if (res.entryId) {
      // The row is written: the journal entry has nothing left to do, and the marker only covers late retries now.
      const journalKey = accountRedisKeys.journalOf(op.accountId);
      await Promise.all([
        this.redis.xdel(journalKey, res.entryId),
        this.redis.expire(accountRedisKeys.op(op.accountId, op.opId), MARKER_AFTER_ROW_S),
      ]).catch((err: unknown) => this.log?.warn('wallet marker not shortened; the journal drain will', { op: op.opId, err }));
    }
    return strip(res);
  }

  /**
   * `apply` for the media path (holds and task settlements): the same
   * dedupe, from any process (the ledger first, then the op's marker), but
   * the ledger row, and the task's usage row when given, are written ahead:
   * the script appends them to the journal, flagged as a marked op, and the
   * drain writes them in batches and then cuts the marker to
   * MARKER_AFTER_ROW_S (so the marker still lives until the row exists).
   * Resolves once the op is durable in the journal, not once its row exists.
   *
   * `absentAt` (performance.now()): the caller knows no row of this op
   * existed then (a hold whose task id was minted and written by this call:
   * nothing else could apply the op before the task was there). Within
   * FRESH_OP_MS of it the ledger read is skipped: as for `apply`'s own read,
   * the marker covers everything applied since (docs/wallet.md).
   */
  async applyMarkedAhead(op: LedgerOp, opts: { gate?: { capNano: number | null }; usage?: StoredUsage; absentAt?: number } = {}): Promise<ApplyResult> {
    const fresh = opts.absentAt !== undefined && performance.now() - opts.absentAt < FRESH_OP_MS;
    if (!fresh && (await this.ledgerHas.has(op.opId))) return { status: 'duplicate', ...(await this.read(op)) };
    const entry = this.journal.entry({ l: ledgerDoc(op), u: opts.usage });
    const res = await this.project(op, { gate: opts.gate ?? null, entry });
    if (res.status === 'applied') this.journal.kick(op.accountId);
    return strip(res);
  }

  /**
   * The fallback of `applyAhead` when Redis stays out: the ledger row and the
   * usage row go straight to Mongo (idempotent by id); the caller then
   * applies the op to the projection with `apply(op, undefined, ticket)` once
   * Redis is back. The row carries the ticket, so a projection rebuilt from
   * the ledger meanwhile knows the charge is counted.
   */
  async recordDirect(op: LedgerOp, usage: StoredUsage, ticket?: ChargeTicket): Promise<void> {
    const doc = { ...ledgerDoc(op), recorded_at: new Date(), ...(ticket ? { writer: ticket.writer, seq: ticket.seq } : {}) };
    if (await this.ledger.insert(doc)) this.countRows([doc]);
    await insertIgnoringDuplicates(this.db.Usage.collection as never, [usage]);
  }

  async balance(walletId: string): Promise<number> {
    const v = await this.redis.get(accountRedisKeys.balance(walletId));
    if (v !== null) return Number(v);
    await this.load(walletId);
    return Number(await this.redis.get(accountRedisKeys.balance(walletId)));
  }

  /** A key's cumulative spend (the key id alone costs one lookup of the key's wallet). */
  async keySpend(key: string | { id: string; account_id: string; wallet_id?: string | null }): Promise<number> {
    let k = key;
    if (typeof k === 'string') {
      const doc = await this.db.ApiKey.findById(k, { account_id: 1, wallet_id: 1 }).lean<{ _id: string; account_id: string; wallet_id?: string | null }>();
      if (!doc) return 0;
      k = { id: doc._id, account_id: doc.account_id, wallet_id: doc.wallet_id };
    }
    return Number((await this.redis.get(accountRedisKeys.keySpend(walletOf(k), k.id))) ?? 0);
  }

  /** Sum of the whole ledger for one wallet: the independent truth the projection must equal (journal entries written first). */
  async ledgerTotals(walletId: string): Promise<{ balanceNano: number; keySpend: Map<string, number>; rows: number }> {
    await this.journal.flush();
    const sums = emptySums();
    const cursor = this.db.Ledger.find({ account_id: walletId }, { amount_nano: 1, key_id: 1, key_spend_nano: 1 }).lean().cursor();
    for await (const e of cursor as AsyncIterable<LedgerDoc>) addRow(sums, e);
    return { balanceNano: sums.balanceNano, keySpend: sums.keySpend, rows: sums.rows };
  }

  /**
   * Fold a wallet's rows recorded up to `now - CHECKPOINT_MARGIN_MS` into a
   * new checkpoint: the last checkpoint plus the rows after it up to the cut.
   * Exact: both ends cut on `recorded_at` the same way the rebuild does.
   * Idempotent (the checkpoint id is the wallet and the cut).
   */
  async checkpoint(walletId: string, now = Date.now()): Promise<WalletCheckpointDoc | null> {
    const prev = await this.lastCheckpoint(walletId);
    const upto = new Date(now - CHECKPOINT_MARGIN_MS);
    if (prev && prev.upto.getTime() >= upto.getTime()) return prev;
    const sums = fromCheckpoint(prev);
    const filter = prev ? { account_id: walletId, recorded_at: { $gt: prev.upto, $lte: upto } } : { account_id: walletId };
    const cursor = this.db.Ledger.find(filter, { amount_nano: 1, key_id: 1, key_spend_nano: 1, recorded_at: 1 }).lean().cursor();
    for await (const e of cursor as AsyncIterable<LedgerDoc>) {
      // Without a previous checkpoint every row is read: rows from before recorded_at existed count in the first one.
      if (!prev && e.recorded_at && e.recorded_at.getTime() > upto.getTime()) continue;
      addRow(sums, e);
    }
    return this.saveCheckpoint(walletId, upto, sums);
  }

  /** Write a checkpoint (its id is the wallet and the cut: writing it twice is a no-op). */
  private async saveCheckpoint(walletId: string, upto: Date, sums: Sums): Promise<WalletCheckpointDoc> {
    const doc: WalletCheckpointDoc = {
      _id: `${walletId}:${upto.getTime()}`,
      account_id: walletId,
      upto,
      balance_nano: sums.balanceNano,
      key_spend: [...sums.keySpend.entries()].map(([key_id, nano]) => ({ key_id, nano })),
      rows: sums.rows,
      created_at: new Date(),
    };
    await insertIgnoringDuplicates(this.db.WalletCheckpoint.collection as never, [doc]);
    this.stats.checkpoints++;
    return doc;
  }

  async lastCheckpoint(walletId: string): Promise<WalletCheckpointDoc | null> {
    return this.db.WalletCheckpoint.findOne({ account_id: walletId }).sort({ upto: -1 }).lean<WalletCheckpointDoc>();
  }

  /**
   * Build the projection if Redis has none (first use, or Redis lost its
   * data): the last checkpoint plus the ledger rows recorded after it, so the
   * cost follows recent activity, not the wallet's age.
   */
  async load(walletId: string): Promise<void> {
    await this.journal.flush();
    const prev = await this.lastCheckpoint(walletId);
    const sums = fromCheckpoint(prev);
    const direct: Array<{ writer: string; seq: number }> = [];
    const since = Date.now() - SEQ_WINDOW_TTL_MS;
    const filter = prev ? { account_id: walletId, recorded_at: { $gt: prev.upto } } : { account_id: walletId };
    const cursor = this.db.Ledger.find(filter, { amount_nano: 1, key_id: 1, key_spend_nano: 1, recorded_at: 1, writer: 1, seq: 1 }).lean().cursor();
    // The next checkpoint, folded in the same pass: the rows up to the cut (as `checkpoint` cuts them).
    const upto = Date.now() - CHECKPOINT_MARGIN_MS;
    const cut = fromCheckpoint(prev);
    let tail = 0;
    for await (const e of cursor as AsyncIterable<LedgerDoc>) {
      addRow(sums, e);
      tail++;
      if (e.writer && typeof e.seq === 'number' && (e.recorded_at?.getTime() ?? 0) >= since) direct.push({ writer: e.writer, seq: e.seq });
      if (!e.recorded_at || e.recorded_at.getTime() <= upto) addRow(cut, e);
    }
    this.stats.lastLoadRows = tail;
    const spends = [...sums.keySpend.entries()];
    await this.redis.walletLoad(
      1 + spends.length + direct.length,
      accountRedisKeys.balance(walletId),
      ...spends.map(([k]) => accountRedisKeys.keySpend(walletId, k)),
      ...direct.map((d) => accountRedisKeys.chatSeq(walletId, d.writer)),
      sums.balanceNano,
      spends.length,
      SEQ_WINDOW_TTL_MS,
      ...spends.map(([, v]) => v),
      ...direct.map((d) => d.seq),
    );
    this.reloads.emit(walletId);
    if (cut.rows - (prev?.rows ?? 0) >= CHECKPOINT_EVERY_ROWS) {
      await this.saveCheckpoint(walletId, new Date(upto), cut).catch((err: unknown) => this.log?.warn('wallet checkpoint failed; the next one folds these rows in', { wallet: walletId, err }));
    }
  }

  /** Operator repair: drop the projection and rebuild it from the ledger. */
  async rebuild(walletId: string, keyIds: string[]): Promise<void> {
    await this.redis.del(accountRedisKeys.balance(walletId), ...keyIds.map((k) => accountRedisKeys.keySpend(walletId, k)));
    await this.load(walletId);
  }

  private countRows(rows: LedgerDoc[]): void {
    // On a scanning store checkpoints are made only by loads (CHECKPOINT_EVERY_ROWS).
    if (filtersByScan(this.db.Ledger.db)) return;
    for (const r of rows) {
      const n = (this.sinceCheckpoint.get(r.account_id) ?? 0) + 1;
      if (n >= CHECKPOINT_EVERY_ROWS) {
        this.sinceCheckpoint.delete(r.account_id);
        this.scheduleCheckpoint(r.account_id);
      } else this.sinceCheckpoint.set(r.account_id, n);
    }
    if (this.sinceCheckpoint.size > 100_000) this.sinceCheckpoint.clear();
  }

  private scheduleCheckpoint(walletId: string): void {
    if (this.checkpointing.has(walletId)) return;
    this.checkpointing.add(walletId);
    setTimeout(() => {
      this.checkpoint(walletId)
        .catch((err: unknown) => this.log?.warn('wallet checkpoint failed; the next one folds these rows in', { wallet: walletId, err }))
        .finally(() => this.checkpointing.delete(walletId));
    }, 0).unref();
  }

  private async read(op: LedgerOp): Promise<{ balanceNano: number; keySpendNano: number }> {
    const [bal, spent] = await this.redis.mget(accountRedisKeys.balance(op.accountId), accountRedisKeys.keySpend(op.accountId, op.keyId ?? '-'));
    if (bal === null) return { balanceNano: await this.balance(op.accountId), keySpendNano: Number(spent ?? 0) };
    return { balanceNano: Number(bal), keySpendNano: Number(spent ?? 0) };
  }

  private async project(
    op: LedgerOp,
    how: { ticket?: ChargeTicket; gate?: { capNano: number | null } | null; entry: string; lease?: LeaseRelease },
  ): Promise<Projected> {
    const w = op.accountId;
    if (op.amountNano < 0) this.debits.emit(op);
    const lease = how.lease && sameShard(how.lease.accountId, w) ? how.lease : undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      let dedupeKey: string;
      let mode: 'm' | 's';
      let arg: number;
      let floor = 0;
      if (how.ticket) {
        if (performance.now() - how.ticket.issuedAt > SEQ_GIVE_UP_MS) throw new Error(`chat charge ${op.opId}: its sequence number expired unapplied`);
        dedupeKey = accountRedisKeys.chatSeq(w, how.ticket.writer);
        mode = 's';
        arg = how.ticket.seq;
        floor = how.ticket.writer === this.writer ? this.floor() : 0;
      } else {
        dedupeKey = accountRedisKeys.op(w, op.opId);
        mode = 'm';
        arg = MARKER_SAFETY_S;
      }
      const [status, bal, spent, entryId] = await sendHot(this.redis, () => this.redis.walletApply(
        accountRedisKeys.balance(w),
        accountRedisKeys.keySpend(w, op.keyId ?? '-'),
        dedupeKey,
        accountRedisKeys.journalOf(w),
        lease ? accountRedisKeys.rateLeases(lease.accountId) : accountRedisKeys.none(w),
        op.amountNano,
        op.keySpendNano ?? 0,
        how.gate ? 1 : 0,
        how.gate?.capNano ?? -1,
        mode,
        arg,
        floor,
        SEQ_WINDOW_TTL_MS,
        how.entry,
        mode === 'm' && how.entry ? '1' : '0',
        lease?.member ?? '',
      ));
      if (status === -2) {
        await this.load(w);
        continue;
      }
      const s = status === 1 ? 'applied' : status === 0 ? 'duplicate' : 'refused';
      countWalletOp(op.kind, s, op.amountNano);
      return { status: s, balanceNano: Number(bal), keySpendNano: Number(spent), entryId: entryId ?? '' };
    }
    throw new Error(`wallet projection for ${w} could not be loaded`);
  }
}

function strip(r: Projected): ApplyResult {
  return { status: r.status, balanceNano: r.balanceNano, keySpendNano: r.keySpendNano };
}

interface Sums {
  balanceNano: number;
  keySpend: Map<string, number>;
  rows: number;
}

function emptySums(): Sums {
  return { balanceNano: 0, keySpend: new Map(), rows: 0 };
}

function fromCheckpoint(cp: WalletCheckpointDoc | null): Sums {
  if (!cp) return emptySums();
  return { balanceNano: cp.balance_nano, keySpend: new Map(cp.key_spend.map((k) => [k.key_id, k.nano])), rows: cp.rows };
}

function addRow(s: Sums, e: Pick<LedgerDoc, 'amount_nano' | 'key_id' | 'key_spend_nano'>): void {
  s.balanceNano += e.amount_nano;
  if (e.key_id && e.key_spend_nano) s.keySpend.set(e.key_id, (s.keySpend.get(e.key_id) ?? 0) + e.key_spend_nano);
  s.rows++;
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
