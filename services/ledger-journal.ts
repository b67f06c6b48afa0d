import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Db, LedgerDoc, UsageDoc } from '../infra/mongo';
import type { Logger } from '../infra/logger';
import { rkeys, shardOf, WALLET_SHARDS, type RedisClient } from '../infra/redis';
import { insertIgnoringDuplicates } from '../infra/batch-insert';
import { failpoint } from '../infra/failpoints';

/** The consumer group every gateway and worker drains the journals in. */
const GROUP = 'ledger-drain';
/** Entries read per shard per pass; one pass writes all shards' entries to Mongo together (one insertMany each for ledger and usage rows). */
const BATCH = 1000;
/** How often a process looks for entries nobody drained (a crashed writer, a failed batch). */
const TICK_MS = 250;
/**
 * An entry delivered to a consumer that has not acknowledged it for this long
 * is taken over by another one: its consumer crashed, or is stuck on a store
 * outage (a second insert of the same rows is a no-op, so a slow consumer
 * that finishes after all does no harm).
 */
const CLAIM_IDLE_MS = 10_000;
/** Consumers with nothing pending and idle this long (processes gone) are removed from the group. */
const FORGET_CONSUMER_MS = 15 * 60_000;
/**
 * Once an op's ledger row is written, its Redis dedupe marker lives this much
 * longer (services/wallet.ts explains the window it covers).
 */
export const MARKER_AFTER_ROW_S = 10 * 60;

export interface JournalEntry {
  /** A ledger op whose projection already moved (the same script appended this entry). */
  l?: LedgerDoc;
  /** The usage row of the call that op belongs to. */
  u?: UsageDoc;
}

type StreamEntry = [id: string, fields: string[] | null];

const DATE_FIELDS = ['created_at', 'submitted_at', 'result_expires_at'] as const;

function revive<T extends Record<string, unknown>>(doc: T): T {
  for (const f of DATE_FIELDS) if (typeof doc[f] === 'string') (doc as Record<string, unknown>)[f] = new Date(doc[f] as string);
  return doc;
}

/**
 * ioredis neither prefixes nor routes (on a Cluster) the key of XGROUP and
 * XINFO; as a script's KEYS it does both.
 */
const XGROUP_CREATE = "return redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')";
const XGROUP_DELCONSUMER = "return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])";
const XINFO_CONSUMERS = "return redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])";

const ALL_SHARDS = Array.from({ length: WALLET_SHARDS }, (_, i) => i);

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
  private readonly dirty = new Set<number>();
  private readonly groupReady = new Set<number>();
  private lastClaim = 0;
  private lastForget = Date.now();
  private failing = false;
  /** Figures for metrics and tests. */
  readonly stats = { drained: 0, batches: 0, claimed: 0, failedBatches: 0 };
  /** Told about every batch of ledger rows written (checkpoint bookkeeping, services/wallet.ts). */
  onRows?: (rows: LedgerDoc[]) => void;

  constructor(private readonly db: Db, private readonly redis: RedisClient, private readonly log?: Logger) {}

  /** The stream of a wallet's shard. */
  keyOf(walletId: string): string {
    return rkeys.journalOf(walletId);
  }

  entry(e: JournalEntry): string {
    return JSON.stringify(e);
  }

  /** Entries not yet written to Mongo, over every shard. */
  async pending(): Promise<number> {
    const lens = await Promise.all(ALL_SHARDS.map((s) => this.redis.xlen(rkeys.journal(s))));
    return lens.reduce((a, b) => a + b, 0);
  }

  /** Append an entry that moves no money (a usage row of a call that cost nothing) to a wallet's shard. */
  async append(e: JournalEntry, walletId: string): Promise<void> {
    await this.redis.xadd(this.keyOf(walletId), '*', 'e', this.entry(e));
    this.kick(walletId);
  }

  /** Drain a wallet's shard soon: appends of the same tick go out as one batch. */
  kick(walletId: string): void {
    this.dirty.add(shardOf(walletId));
    if (this.running) return;
    this.running = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.loop(false));
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

  /** Write everything appended so far (and anything left pending by this process) to Mongo. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    let busy = await this.pass(ALL_SHARDS, true);
    while (busy.length > 0) busy = await this.pass(busy, false);
  }

  async stop(timeoutMs = 5_000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.race([this.flush().catch(() => undefined), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  private takeDirty(): number[] {
    const shards = [...this.dirty];
    this.dirty.clear();
    return shards;
  }

  private async loop(tick: boolean): Promise<void> {
    try {
      const sweep = tick || this.failing;
      let busy = await this.pass(sweep ? ALL_SHARDS : this.takeDirty(), sweep);
      // Shards that gave entries may hold more; shards kicked meanwhile are drained in the same passes.
      while (busy.length > 0 || this.dirty.size > 0) {
        busy = await this.pass([...new Set([...busy, ...this.takeDirty()])], false);
      }
      if (this.failing) this.log?.info('ledger journal drained again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.log?.warn('ledger journal drain failed; retrying', { err });
      this.failing = true;
    } finally {
      this.running = null;
    }
  }

  /**
   * One batch over the given shards; with `sweep`, first this consumer's
   * unacknowledged entries and, now and then, abandoned ones. Returns the
   * shards that had entries.
   */
  private async pass(shards: number[], sweep: boolean): Promise<number[]> {
    if (shards.length === 0) return [];
    const claiming = sweep && Date.now() - this.lastClaim >= CLAIM_IDLE_MS / 4;
    if (claiming) this.lastClaim = Date.now();
    const forgetting = sweep && Date.now() - this.lastForget >= FORGET_CONSUMER_MS;
    if (forgetting) this.lastForget = Date.now();
    const reads = await Promise.all(shards.map((s) => this.readShard(s, sweep, claiming, forgetting)));
    const byShard = shards.map((s, i) => [s, reads[i]] as const).filter(([, r]) => r.length > 0);
    await this.write(byShard);
    return byShard.map(([s]) => s);
  }

  private async readShard(shard: number, sweep: boolean, claiming: boolean, forgetting: boolean): Promise<StreamEntry[]> {
    try {
      return await this.readShardOnce(shard, sweep, claiming, forgetting);
    } catch (err) {
      // The stream or its group is gone (Redis lost its data, a key flush): make it again and go on.
      if (!String((err as Error).message).includes('NOGROUP')) throw err;
      this.groupReady.delete(shard);
      return this.readShardOnce(shard, sweep, claiming, forgetting);
    }
  }

  private async readShardOnce(shard: number, sweep: boolean, claiming: boolean, forgetting: boolean): Promise<StreamEntry[]> {
    const key = rkeys.journal(shard);
    await this.ensureGroup(shard);
    const out: StreamEntry[] = [];
    if (sweep) {
      out.push(...(await this.read(key, '0')));
      if (claiming) {
        const claimed = await this.claim(key);
        this.stats.claimed += claimed.length;
        out.push(...claimed);
      }
      if (forgetting) await this.forgetConsumers(key);
    }
    out.push(...(await this.read(key, '>')));
    return out;
  }

  private async ensureGroup(shard: number): Promise<void> {
    if (this.groupReady.has(shard)) return;
    try {
      // From the start of the stream: entries appended before the group existed are drained too.
      await this.redis.eval(XGROUP_CREATE, 1, rkeys.journal(shard), GROUP);
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
    this.groupReady.add(shard);
  }

  private async read(key: string, from: '0' | '>'): Promise<StreamEntry[]> {
    const res = (await this.redis.xreadgroup('GROUP', GROUP, this.consumer, 'COUNT', BATCH, 'STREAMS', key, from)) as
      | Array<[string, StreamEntry[]]>
      | null;
    return res?.[0]?.[1] ?? [];
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
    const usage: UsageDoc[] = [];
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
          if (e.u) usage.push(revive(e.u as unknown as Record<string, unknown>) as unknown as UsageDoc);
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
    await Promise.all(marked.map((l) => this.redis.expire(rkeys.op(l.account_id, l._id), MARKER_AFTER_ROW_S)));
    failpoint('journal.before-ack');
    await Promise.all(byShard.map(([shard, entries]) => {
      const key = rkeys.journal(shard);
      const ids = entries.map(([id]) => id);
      return this.redis.multi().xack(key, GROUP, ...ids).xdel(key, ...ids).exec();
    }));
    this.stats.drained += count;
    this.stats.batches++;
    return count;
  }
}
