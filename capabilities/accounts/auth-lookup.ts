import type { AccountRecord, KeyRecord } from '../../domain/api-key';
import { accountRedisKeys } from './store';
import { sameShard, sendHot, type RedisClient } from '../../platform/redis';
import type { KeyOwner, KeyService } from './keys';
import type { AccountService } from './accounts';
import type { LedgerOp, Wallet } from './wallet';

/** The account limiter's verdict for this request, when the account has limits. */
export interface RateDecision {
  allowed: boolean;
  reason: string;
  rpm: number;
  concurrency: number;
  rpmUsed: number;
  concUsed: number;
  resetMs: number;
}

export interface AuthSnapshot {
  key: KeyRecord;
  account: AccountRecord | null;
  balanceNano: number;
  keySpendNano: number;
  /** Set when limits were applied in the same round trip (see rate-limit middleware). */
  rate?: RateDecision;
  /** The key and account records as Redis held them: a guess is confirmed unchanged by comparing these. */
  raw?: { key: string; account: string };
}

/** The last verdict read for a key hash in this process, and when (the seed of an optimistic call, below). */
interface Recent {
  snapshot: AuthSnapshot;
  at: number;
  walletId: string;
  keyId: string;
  /** The wallet's and the key's running debit totals (`AuthLookup.debits`) already in the snapshot's figures. */
  walletMark: number;
  keyMark: number;
}

/** A fresh read's running debit totals, taken as it is sent (AuthLookup.marks). */
interface Marks {
  walletMark: number;
  keyMark: number;
  generation: number;
}

/** Running totals past this are reset (with every guess) before they lose exactness as doubles. */
const DEBIT_TOTAL_LIMIT = 2 ** 52;

/** A guess older than this is not acted on: the call waits for its fresh state as usual. */
export const GUESS_MAX_AGE_MS = 5_000;

/**
 * Everything authentication and the rate limiter need in one Redis round trip
 * (platform/lua/auth-gate.lua). Which key, account and wallet a key hash names
 * never changes, so that mapping is memoised in-process; the mutable state
 * (key record, account, balance, key spend, limits) is read fresh on every
 * request, so a disabled key is refused on the very next request on every
 * instance. The state lives under the account's wallet shard (one hash slot,
 * platform/redis.ts), so one MGET or one script reads it on a Redis Cluster too;
 * only a key that charges another wallet (an agent key's escrow) reads that
 * wallet's balance and spend alongside, in the same pipeline. Misses fall
 * back to Mongo and fill Redis.
 */
export class AuthLookup {
  private readonly owners = new Map<string, KeyOwner>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyService,
    private readonly accounts: AccountService,
    private readonly wallet: Wallet,
  ) {
    // What this process changes, its guesses follow at once: a key or account record it published ends
    // their guesses, money it takes out of a wallet lowers every guess of that wallet. Changes made by
    // other processes only the fresh read shows (docs/wallet.md).
    keys.published.listen((hash) => this.expire(hash));
    accounts.published.listen((accountId) => this.expireAll(accountId));
    wallet.debits.listen((op) => this.debited(op));
    wallet.reloads.listen((walletId) => this.expireAll(walletId));
  }

  /** Accounts last seen with limits: they go straight to the Lua gate. */
  private readonly limited = new Set<string>();

  /** Per key hash, the last snapshot read (gateway/middleware/auth.ts may act on it while the fresh one is read). */
  private readonly recent = new Map<string, Recent>();
  /** The key hashes with a snapshot in `recent`, by the wallet (and the account) they belong to. */
  private readonly hashesOf = new Map<string, Set<string>>();
  /**
   * What this process has taken out of each wallet, and put on each key's spend, since the guesses were
   * last reset: running totals (nano, negative for the wallet). A guess subtracts what was added since its
   * snapshot's read was sent, when it is read, so a debit costs O(1) however many keys the wallet has.
   */
  private readonly walletDebits = new Map<string, number>();
  private readonly keyDebits = new Map<string, number>();
  /** How many times the totals were reset (a read whose marks predate a reset is not kept). */
  private generation = 0;

  /**
   * The last snapshot this process read for a key hash, if it is at most GUESS_MAX_AGE_MS old. Only a
   * guess: the caller reads the fresh state anyway and confirms it before anything reaches the client.
   */
  guess(hash: string, now = Date.now()): AuthSnapshot | undefined {
    const r = this.recent.get(hash);
    if (!r || now - r.at > GUESS_MAX_AGE_MS) return undefined;
    const wallet = this.walletDebits.get(r.walletId) ?? 0;
    if (wallet !== r.walletMark) {
      r.snapshot.balanceNano += wallet - r.walletMark;
      r.walletMark = wallet;
    }
    const key = this.keyDebits.get(r.keyId) ?? 0;
    if (key !== r.keyMark) {
      r.snapshot.keySpendNano += key - r.keyMark;
      r.keyMark = key;
    }
    return r.snapshot;
  }

  /**
   * This process took money out of a wallet (a charge, a hold, a debit; as the op is sent, and again
   * if it is retried: a guess may only err low): every guess of the wallet follows, and the spend of
   * the key that paid, so the next optimistic call sees it (applied when the guess is read).
   */
  private debited(op: LedgerOp): void {
    const wallet = (this.walletDebits.get(op.accountId) ?? 0) + op.amountNano;
    const key = op.keyId && op.keySpendNano ? (this.keyDebits.get(op.keyId) ?? 0) + op.keySpendNano : 0;
    if (wallet < -DEBIT_TOTAL_LIMIT || key > DEBIT_TOTAL_LIMIT || this.walletDebits.size > 100_000 || this.keyDebits.size > 100_000) {
      this.forgetAll();
      return;
    }
    this.walletDebits.set(op.accountId, wallet);
    if (key) this.keyDebits.set(op.keyId!, key);
  }

  /** Every guess and every running total dropped: the next calls wait for their fresh state. */
  private forgetAll(): void {
    this.generation++;
    this.recent.clear();
    this.hashesOf.clear();
    this.walletDebits.clear();
    this.keyDebits.clear();
  }

  /**
   * A key's guess is no longer acted on (the next call waits for its fresh state). Its snapshot stays,
   * so an unchanged record's text is still shared (`records`).
   */
  private expire(hash: string): void {
    const r = this.recent.get(hash);
    if (r) r.at = -Infinity;
  }

  /** Every guess of a wallet or account is no longer acted on. */
  private expireAll(id: string): void {
    for (const hash of this.hashesOf.get(id) ?? []) this.expire(hash);
  }

  /**
   * A snapshot's key and account records from the JSON text Redis holds. Text equal to what the last
   * snapshot of this key hash was made from (the usual case: records change when someone edits them)
   * reuses that snapshot's records and text, so a call neither parses both records again nor holds its
   * own copies of them while it runs (an open stream holds its snapshot to the end). The records are
   * frozen, deeply: they are shared by every call of the key until the text changes.
   */
  private records(hash: string, keyJson: string, accountJson: string): Pick<AuthSnapshot, 'key' | 'account' | 'raw'> {
    const prev = this.recent.get(hash)?.snapshot;
    const sameKey = prev?.raw?.key === keyJson;
    const sameAccount = prev?.raw?.account === accountJson && prev.account !== null;
    if (sameKey && sameAccount) return { key: prev.key, account: prev.account, raw: prev.raw };
    return {
      key: sameKey ? prev!.key : deepFreeze(JSON.parse(keyJson) as KeyRecord),
      account: sameAccount ? prev!.account : deepFreeze(JSON.parse(accountJson) as AccountRecord),
      raw: { key: sameKey ? prev!.raw!.key : keyJson, account: sameAccount ? prev!.raw!.account : accountJson },
    };
  }

  /**
   * The running debit totals of a key's wallet and of the key, taken as its fresh read is sent: a debit
   * sent before that (on the same connection) is in what the read returns, one sent after is not.
   */
  private marks(owner: KeyOwner): Marks {
    return { walletMark: this.walletDebits.get(owner.walletId) ?? 0, keyMark: this.keyDebits.get(owner.keyId) ?? 0, generation: this.generation };
  }

  private remember(hash: string, owner: KeyOwner, snapshot: AuthSnapshot, { walletMark, keyMark, generation }: Marks): AuthSnapshot {
    // Totals reset while the read was under way: its marks mean nothing now, so it is not kept as a guess.
    if (generation !== this.generation) return snapshot;
    if (this.recent.size > 100_000) {
      this.forgetAll();
      return snapshot;
    }
    this.recent.set(hash, { snapshot, at: Date.now(), walletId: owner.walletId, keyId: owner.keyId, walletMark, keyMark });
    this.index(owner.walletId, hash);
    if (owner.accountId !== owner.walletId) this.index(owner.accountId, hash);
    return snapshot;
  }

  private index(id: string, hash: string): void {
    let hashes = this.hashesOf.get(id);
    if (!hashes) this.hashesOf.set(id, (hashes = new Set()));
    hashes.add(hash);
  }

  async byHash(hash: string, limit?: { member: string; leaseMs: number }): Promise<AuthSnapshot | null> {
    let owner = this.owners.get(hash);
    if (!owner) {
      const found = await this.keys.ownerOfHash(hash);
      if (!found) return null;
      owner = found;
      if (this.owners.size > 100_000) this.owners.clear();
      this.owners.set(hash, owner);
    }
    const { keyId, accountId, walletId } = owner;
    const marks = this.marks(owner);
    const apart = !sameShard(accountId, walletId);
    // The other wallet's figures, read in the same pipeline as the account's state.
    const walletSide = apart ? this.redis.mget(accountRedisKeys.balance(walletId), accountRedisKeys.keySpend(walletId, keyId)) : null;
    void walletSide?.catch(() => undefined); // awaited below; a failure surfaces there
    // Accounts without limits (the default) need no script: a plain MGET reads the same state. If the fresh
    // account record shows limits were just set, this very request goes through the Lua gate below.
    if (!limit || !this.limited.has(accountId)) {
      const [keyJson, accountJson, ownBalance, ownSpend] = await sendHot(this.redis, () => this.redis.mget(
        accountRedisKeys.keyRecord(accountId, keyId), accountRedisKeys.account(accountId),
        apart ? accountRedisKeys.none(accountId) : accountRedisKeys.balance(walletId), apart ? accountRedisKeys.none(accountId) : accountRedisKeys.keySpend(walletId, keyId),
      ));
      const [balance, spend] = walletSide ? await walletSide : [ownBalance, ownSpend];
      if (keyJson && accountJson && balance !== null) {
        const records = this.records(hash, keyJson, accountJson);
        const account = records.account!;
        if (!limit || (!account.rpm && !account.concurrency)) {
          return this.remember(hash, owner, snapshotOf(records, Number(balance), spend !== null ? Number(spend) : 0, undefined), marks);
        }
        this.limited.add(accountId);
      }
    }
    const r = await sendHot(this.redis, () => this.redis.authGate(
      accountRedisKeys.keyRecord(accountId, keyId), accountRedisKeys.account(accountId),
      apart ? accountRedisKeys.none(accountId) : accountRedisKeys.balance(walletId), apart ? accountRedisKeys.none(accountId) : accountRedisKeys.keySpend(walletId, keyId),
      accountRedisKeys.rateWindow(accountId), accountRedisKeys.rateLeases(accountId),
      limit?.member ?? '-', limit?.leaseMs ?? 0, limit ? '1' : '0',
    ));
    const [keyJson, accountJson, ownBalance, ownSpend, limited] = r;
    const [balance, spend] = walletSide ? await walletSide : [ownBalance, ownSpend];
    if (!keyJson || !accountJson) {
      // Cold Redis: fill it, then decide once more with everything present.
      const key = await this.keys.record(owner);
      if (!key) return null;
      const account = await this.accounts.lookup(accountId);
      if (!account) return { key, account: null, balanceNano: 0, keySpendNano: 0 };
      return this.byHash(hash, limit);
    }
    const records = this.records(hash, keyJson, accountJson);
    const balanceNano = balance !== null ? Number(balance) : await this.wallet.balance(walletId);
    if (limited !== 1) this.limited.delete(accountId);
    const rate = limited === 1 ? { allowed: r[5] === 1, reason: r[6], rpm: r[7], concurrency: r[8], rpmUsed: r[9], concUsed: r[10], resetMs: r[11] } : undefined;
    return this.remember(hash, owner, snapshotOf(records, balanceNano, spend !== null ? Number(spend) : 0, rate), marks);
  }
}

/**
 * A snapshot, always of one shape (one literal, every member present). Built by spreading the records
 * (`{ ...records, balanceNano, ... }`) it cost 1.2-1.6 us on Node 20 against 0.1 for this literal: V8
 * copies a spread that a literal then adds members to (or that gets members assigned) without reusing
 * a map, so each such object has a map of its own and every later read of it misses its caches (the
 * guess's `+=` on one cost 0.7 us more). A microbenchmark of the same shapes, objects kept alive:
 * `{...s}` 23 ns, `{...s, a, b}` 1,183 ns, `Object.assign({}, s, {a, b})` 95 ns, a literal 21 ns. In
 * bench:chat-ab (two runs) the gateway's own added latency fell 8-11 %.
 */
function snapshotOf(records: Pick<AuthSnapshot, 'key' | 'account' | 'raw'>, balanceNano: number, keySpendNano: number, rate: RateDecision | undefined): AuthSnapshot {
  return { key: records.key, account: records.account, raw: records.raw, balanceNano, keySpendNano, rate };
}

/** A parsed JSON value made read-only all the way down (what JSON.parse returns: plain objects and arrays). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
