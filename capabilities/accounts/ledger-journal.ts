import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { type AccountModels, type LedgerDoc, accountRedisKeys } from './store';
import type { UsageModels, StoredUsage } from '../usage/store';
import type { Logger } from '../../platform/logger';
import { shardOf, WALLET_SHARDS, type RedisClient } from '../../platform/redis';
import { insertIgnoringDuplicates } from '../../platform/batch-insert';
import { failpoint } from '../../platform/failpoints';

/** The consumer group every gateway and worker drains the journals in. */
const GROUP = 'ledger-drain';
/** Entries read per shard per pass; one pass writes all shards' entries to Mongo together (one insertMany each for ledger and usage rows). */
const BATCH = 1000;
/**
 * How often a process looks for entries nobody drained (a writer that died
 * before its drain, a failed batch). Only crash recovery depends on it: a
 * writer drains its own entries (`kick`), and readers of rows flush first.
 */
const TICK_MS = 1_000;
/**
 * A writer's own entries are drained this long after the first of them
 * (or at once past DRAIN_AT_ENTRIES): the charge is durable in Redis already,
 * so the wait costs no safety, and it turns one Mongo batch per call (two
 * inserts, three Redis round trips, and the store's CPU, all competing with
 * the next call) into one batch per DRAIN_DELAY_MS at any load.
 */
const DRAIN_DELAY_MS = 200;
const DRAIN_AT_ENTRIES = 1000;
/**
 * An entry delivered to a consumer that has not acknowledged it for this long
 * is taken over by another one: its consumer crashed, or is stuck on a store
 * outage (a second insert of the same rows is a no-op, so a slow consumer
 * that finishes after all does no harm).
 */
const CLAIM_IDLE_MS = 10_000;
/**
 * A flush waits at most this long for entries another process read before it and is still writing
 * (its insert in flight): a reader that flushes then sees every row appended before its flush.
 */
const FLUSH_WAIT_MS = 1_000;
/** Consumers with nothing pending and idle this long (processes gone) are removed from the group. */
const FORGET_CONSUMER_MS = 15 * 60_000;
/**
 * Once an op's ledger row is written, its Redis dedupe marker lives this much
 * longer (capabilities/accounts/wallet.ts explains the window it covers).
 */
export const MARKER_AFTER_ROW_S = 10 * 60;

export interface JournalEntry {
  /** A ledger op whose projection already moved (the same script appended this entry). */
  l?: LedgerDoc;
  /** The usage row of the call that op belongs to. */
  u?: StoredUsage;
}

type StreamEntry = [id: string, fields: string[] | null];

const DATE_FIELDS = ['created_at', 'submitted_at', 'result_expires_at'] as const;

/** An entry's dates back as Dates: epoch milliseconds (`swapDates`), or ISO strings (entries written before). */
function revive<T extends Record<string, unknown>>(doc: T): T {
  for (const f of DATE_FIELDS) {
    const v = doc[f];
    if (typeof v === 'number' || typeof v === 'string') (doc as Record<string, unknown>)[f] = new Date(v);
  }
  return doc;
}

/**
 * Swap a document's dates for epoch milliseconds in place, returning what `putDatesBack` needs.
 * JSON.stringify takes V8's fast path only for objects without a Date (a Date's toJSON sends the whole
 * entry down the slow one). In place, not a copy: a usage row is built a field at a time, and copying
 * it cost more than the slow path saved (an entry of a chat call's two documents: 11.5 us copied, 8.5
 * with its Dates, 4.9 swapped).
 */
function swapDates(doc: object | undefined): Array<Date | undefined> | undefined {
  if (!doc) return undefined;
  const d = doc as Record<string, unknown>;
  let dates: Array<Date | undefined> | undefined;
  for (let i = 0; i < DATE_FIELDS.length; i++) {
    const v = d[DATE_FIELDS[i]];
    if (!(v instanceof Date)) continue;
    (dates ??= [])[i] = v;
    d[DATE_FIELDS[i]] = v.getTime();
  }
  return dates;
}

function putDatesBack(doc: object | undefined, dates: Array<Date | undefined> | undefined): void {
  if (!doc || !dates) return;
  for (let i = 0; i < DATE_FIELDS.length; i++) if (dates[i]) (doc as Record<string, unknown>)[DATE_FIELDS[i]] = dates[i];
}

/**
 * ioredis neither prefixes nor routes (on a Cluster) the key of XGROUP and
 * XINFO; as a script's KEYS it does both.
 */
const XGROUP_CREATE = "return redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')";
const XGROUP_DELCONSUMER = "return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])";
const XINFO_CONSUMERS = "return redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])";

const ALL_SHARDS = Array.from({ length: WALLET_SHARDS }, (_, i) => i);
/** The shard of a stream named in an XREADGROUP reply (keys come back with the deployment prefix). */
const SHARD_OF_STREAM = /\{ws(\d+)\}journal$/;

function streamEntries(reply: unknown): Array<[string, StreamEntry[]]> {
  return (reply as Array<[string, StreamEntry[]]> | null) ?? [];
}

/**
 * The write-ahead journal of money: one Redis stream per wallet shard (the
 * shard's hash slot, so the wallet script appends to it in the same atomic
 * step that moves the projection, on one Redis or a Cluster), drained to the
 * Mongo ledger (and usage rows) in large batches by every gateway and worker
 * through one consumer group per stream. A charge is durable once the script
 * returned (Redis runs with an append-only file); the drain is idempotent by
 * op id and row id, so an entry written twice (a consumer that died between
 * the insert and the acknowledgement, a takeover of a slow consumer) is still
 * one ledger row. Entries are deleted once written, so the streams hold only
 * what Mongo does not have yet. A writer kicks the drain of its own shard;
 * a timer sweeps every shard for what others left.
 */
export class LedgerJournal {
  private readonly consumer = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** The delayed drain of kicked shards, when one is scheduled. */
  private soon: NodeJS.Timeout | null = null;
  /** Entries kicked since the last drain started (approximately: one per kick). */
  private kicked = 0;
  private readonly dirty = new Set<number>();
  private readonly groupReady = new Set<number>();
  private lastClaim = 0;
  private lastForget = Date.now();
  private failing = false;
  /** Figures for metrics and tests. */
  readonly stats = { drained: 0, batches: 0, claimed: 0, failedBatches: 0 };
  /** Told about every batch of ledger rows written (checkpoint bookkeeping, capabilities/accounts/wallet.ts). */
  onRows?: (rows: LedgerDoc[]) => void;

  constructor(private readonly db: AccountModels & UsageModels, private readonly redis: RedisClient, private readonly log?: Logger) {}

  /** The stream of a wallet's shard. */
  keyOf(walletId: string): string {
    return accountRedisKeys.journalOf(walletId);
  }

  /** An entry's text: its documents' dates as epoch milliseconds (`swapDates`); the documents are left as they were. */
  entry(e: JournalEntry): string {
    const l = swapDates(e.l);
    const u = swapDates(e.u);
    try {
      return JSON.stringify({ l: e.l, u: e.u });
    } finally {
      putDatesBack(e.l, l);
      putDatesBack(e.u, u);
    }
  }

  /** Entries not yet written to Mongo, over every shard. */
  async pending(): Promise<number> {
    const lens = await Promise.all(ALL_SHARDS.map((s) => this.redis.xlen(accountRedisKeys.journal(s))));
    return lens.reduce((a, b) => a + b, 0);
  }

  /** Append an entry that moves no money (a usage row of a call that cost nothing) to a wallet's shard. */
  async append(e: JournalEntry, walletId: string): Promise<void> {
    await this.redis.xadd(this.keyOf(walletId), '*', 'e', this.entry(e));
    this.kick(walletId);
  }

  /**
   * Drain a wallet's shard soon: every append of the next DRAIN_DELAY_MS goes
   * out as one batch (at once once DRAIN_AT_ENTRIES are waiting).
   */
  kick(walletId: string): void {
    this.dirty.add(shardOf(walletId));
    this.kicked++;
    this.schedule();
  }

  private schedule(): void {
    if (this.running || this.dirty.size === 0) return;
    if (this.kicked >= DRAIN_AT_ENTRIES) {
      if (this.soon) clearTimeout(this.soon);
      this.soon = null;
      this.running = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.loop(false));
      return;
    }
    if (this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      if (!this.running) this.running = this.loop(false);
    }, DRAIN_DELAY_MS);
    // A process that exits without stop() leaves its entries to the others' sweep: nothing is lost.
    this.soon.unref();
  }

  /** Drain in the background until stop(). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.loop(true);
    }, TICK_MS);
    this.timer.unref();
  }

  /**
   * Write everything appended so far (and anything left pending by this process) to Mongo, then wait
   * (up to FLUSH_WAIT_MS) for what another gateway or worker read first and is still writing: every
   * entry appended before the flush, by any process, has its rows in Mongo when it returns.
   */
  async flush(): Promise<void> {
    const [sec, usec] = await this.redis.time();
    const since = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    await this.drainOwn();
    await this.writtenUpTo(since);
  }

  /** Write everything appended so far, and anything left pending by this process, to Mongo. */
  private async drainOwn(): Promise<void> {
    while (this.running) await this.running;
    // This pass covers every shard: a delayed drain still scheduled has nothing left to do.
    this.takeDirty();
    if (this.soon) clearTimeout(this.soon);
    this.soon = null;
    let busy = await this.pass(ALL_SHARDS, true);
    while (busy.length > 0) busy = await this.pass(busy, false);
  }

  /**
   * Wait until no shard holds an entry appended at or before `since` (Redis's clock, which stamps the
   * entries' ids): entries are deleted once their rows are written. Bounded: an entry whose consumer
   * died is taken over only after CLAIM_IDLE_MS, and the reader goes on without it.
   */
  private async writtenUpTo(since: number): Promise<void> {
    const deadline = Date.now() + FLUSH_WAIT_MS;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      const oldest = await Promise.all(ALL_SHARDS.map((s) => this.redis.xrange(accountRedisKeys.journal(s), '-', '+', 'COUNT', 1)));
      const waiting = oldest.some((r) => r.length > 0 && Number(r[0][0].slice(0, r[0][0].indexOf('-'))) <= since);
      if (!waiting || Date.now() >= deadline) return;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  async stop(timeoutMs = 5_000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.soon) clearTimeout(this.soon);
    this.soon = null;
    // A process stopping writes what it can; other processes' entries in flight are theirs to finish.
    await Promise.race([this.drainOwn().catch(() => undefined), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  private takeDirty(): number[] {
    const shards = [...this.dirty];
    this.dirty.clear();
    this.kicked = 0;
    return shards;
  }

  private async loop(tick: boolean): Promise<void> {
    const wasFailing = this.failing;
    try {
      const sweep = tick || this.failing;
      if (sweep) this.takeDirty();
      let busy = await this.pass(sweep ? ALL_SHARDS : this.takeDirty(), sweep);
      // Shards that gave a full batch may hold more; shards kicked meanwhile wait for their own delayed drain.
      while (busy.length > 0) busy = await this.pass(busy, false);
      if (wasFailing && !this.failing) this.log?.info('ledger journal drained again');
    } catch (err) {
      if (!wasFailing) this.log?.warn('ledger journal drain failed; retrying', { err });
    } finally {
      this.running = null;
      this.schedule();
    }
  }

  /**
   * One batch over the given shards; with `sweep`, also (after a failure, and
   * now and then) this consumer's unacknowledged entries and abandoned ones.
   * Returns the shards that gave a full batch (they may hold more).
   */
  private async pass(shards: number[], sweep: boolean): Promise<number[]> {
    if (shards.length === 0) return [];
    const claiming = sweep && Date.now() - this.lastClaim >= CLAIM_IDLE_MS / 4;
    if (claiming) this.lastClaim = Date.now();
    const forgetting = sweep && Date.now() - this.lastForget >= FORGET_CONSUMER_MS;
    if (forgetting) this.lastForget = Date.now();
    // Entries this consumer read but did not acknowledge exist only after a failed batch (or in a takeover).
    const own = sweep && (this.failing || claiming);
    try {
      const { entries, full, ownFull } = await this.readShards(shards, own, claiming, forgetting);
      await this.write([...entries].filter(([, r]) => r.length > 0));
      if (own) this.failing = ownFull;
      return full;
    } catch (err) {
      this.failing = true;
      throw err;
    }
  }

  private async readShards(shards: number[], own: boolean, claiming: boolean, forgetting: boolean) {
    try {
      return await this.readShardsOnce(shards, own, claiming, forgetting);
    } catch (err) {
      // A stream or its group is gone (Redis lost its data, a key flush): make them again and go on.
      if (!String((err as Error).message).includes('NOGROUP')) throw err;
      for (const s of shards) this.groupReady.delete(s);
      return this.readShardsOnce(shards, own, claiming, forgetting);
    }
  }

  private async readShardsOnce(shards: number[], own: boolean, claiming: boolean, forgetting: boolean) {
    await Promise.all(shards.map((s) => this.ensureGroup(s)));
    const entries = new Map<number, StreamEntry[]>(shards.map((s) => [s, []]));
    let ownFull = false;
    if (own) {
      for (const [s, got] of await this.read(shards, '0')) {
        entries.get(s)!.push(...got);
        if (got.length >= BATCH) ownFull = true;
      }
    }
    if (claiming || forgetting) {
      await Promise.all(shards.map(async (s) => {
        const key = accountRedisKeys.journal(s);
        if (claiming) {
          const claimed = await this.claim(key);
          this.stats.claimed += claimed.length;
          entries.get(s)!.push(...claimed);
        }
        if (forgetting) await this.forgetConsumers(key);
      }));
    }
    const full: number[] = [];
    for (const [s, got] of await this.read(shards, '>')) {
      entries.get(s)!.push(...got);
      if (got.length >= BATCH) full.push(s);
    }
    return { entries, full, ownFull };
  }

  private async ensureGroup(shard: number): Promise<void> {
    if (this.groupReady.has(shard)) return;
    try {
      // From the start of the stream: entries appended before the group existed are drained too.
      await this.redis.eval(XGROUP_CREATE, 1, accountRedisKeys.journal(shard), GROUP);
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
    this.groupReady.add(shard);
  }

  /**
   * XREADGROUP over the given shards' streams: one command on one Redis; on a
   * Cluster one per shard (each stream is in its own slot).
   */
  private async read(shards: number[], from: '0' | '>'): Promise<Array<[number, StreamEntry[]]>> {
    if (this.redis.isCluster || shards.length === 1) {
      return Promise.all(shards.map(async (s) => [s, streamEntries(await this.xreadgroup([accountRedisKeys.journal(s)], from))[0]?.[1] ?? []] as [number, StreamEntry[]]));
    }
    const replies = streamEntries(await this.xreadgroup(shards.map((s) => accountRedisKeys.journal(s)), from));
    const out: Array<[number, StreamEntry[]]> = [];
    for (const [key, got] of replies) {
      const m = SHARD_OF_STREAM.exec(key);
      if (m) out.push([Number(m[1]), got]);
    }
    return out;
  }

  private xreadgroup(keys: string[], from: '0' | '>'): Promise<unknown> {
    return this.redis.xreadgroup('GROUP', GROUP, this.consumer, 'COUNT', BATCH, 'STREAMS', ...keys, ...keys.map(() => from));
  }

  private async claim(key: string): Promise<StreamEntry[]> {
    const res = (await this.redis.xautoclaim(key, GROUP, this.consumer, CLAIM_IDLE_MS, '0-0', 'COUNT', BATCH)) as [string, StreamEntry[], string[]?];
    return res[1] ?? [];
  }

  private async forgetConsumers(key: string): Promise<void> {
    const rows = (await this.redis.eval(XINFO_CONSUMERS, 1, key, GROUP)) as Array<Array<string | number>>;
    for (const row of rows) {
      const info: Record<string, string | number> = {};
      for (let i = 0; i + 1 < row.length; i += 2) info[String(row[i])] = row[i + 1];
      if (info.name !== this.consumer && Number(info.pending) === 0 && Number(info.idle) > FORGET_CONSUMER_MS) {
        await this.redis.eval(XGROUP_DELCONSUMER, 1, key, GROUP, String(info.name));
      }
    }
  }

  /**
   * Ledger rows first, then usage rows, then the markers of marked ops get
   * their short life, then acknowledge and delete: a crash anywhere replays
   * into no-ops.
   */
  private async write(byShard: Array<readonly [number, StreamEntry[]]>): Promise<number> {
    if (byShard.length === 0) return 0;
    const ledger: LedgerDoc[] = [];
    const usage: StoredUsage[] = [];
    const marked: LedgerDoc[] = [];
    const recordedAt = new Date();
    let count = 0;
    for (const [, entries] of byShard) {
      for (const [id, fields] of entries) {
        count++;
        if (!fields) continue; // deleted while pending: already written
        const raw = fields[fields.indexOf('e') + 1];
        try {
          const e = JSON.parse(raw) as JournalEntry;
          if (e.l) {
            const l = revive(e.l as unknown as Record<string, unknown>) as unknown as LedgerDoc;
            l.recorded_at = recordedAt;
            ledger.push(l);
            if (fields.includes('m')) marked.push(l);
          }
          if (e.u) usage.push(revive(e.u as unknown as Record<string, unknown>) as unknown as StoredUsage);
        } catch (err) {
          this.log?.error('ledger journal entry unreadable; dropped', { id, raw, err });
        }
      }
    }
    try {
      await insertIgnoringDuplicates(this.db.Ledger.collection as never, ledger);
      await insertIgnoringDuplicates(this.db.Usage.collection as never, usage);
    } catch (err) {
      this.stats.failedBatches++;
      throw err;
    }
    if (ledger.length) this.onRows?.(ledger);
    await Promise.all(marked.map((l) => this.redis.expire(accountRedisKeys.op(l.account_id, l._id), MARKER_AFTER_ROW_S)));
    failpoint('journal.before-ack');
    await Promise.all(byShard.map(([shard, entries]) => {
      const key = accountRedisKeys.journal(shard);
      const ids = entries.map(([id]) => id);
      return this.redis.multi().xack(key, GROUP, ...ids).xdel(key, ...ids).exec();
    }));
    this.stats.drained += count;
    this.stats.batches++;
    return count;
  }
}
