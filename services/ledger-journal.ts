import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Db, LedgerDoc, UsageDoc } from '../infra/mongo';
import type { Logger } from '../infra/logger';
import { rkeys, type RedisClient } from '../infra/redis';
import { insertIgnoringDuplicates } from '../infra/batch-insert';
import { failpoint } from '../infra/failpoints';

/** The consumer group every gateway and worker drains the journal in. */
const GROUP = 'ledger-drain';
/** Entries written to Mongo per batch (one insertMany for ledger rows, one for usage rows). */
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
 * The write-ahead journal of money: a Redis stream that the wallet script
 * appends to in the same atomic step that moves the projection, drained to
 * the Mongo ledger (and usage rows) in large batches by every gateway and
 * worker through one consumer group. A charge is durable once the script
 * returned (Redis runs with an append-only file); the drain is idempotent by
 * op id and row id, so an entry written twice (a consumer that died between
 * the insert and the acknowledgement, a takeover of a slow consumer) is still
 * one ledger row. Entries are deleted once written, so the stream holds only
 * what Mongo does not have yet.
 */
export class LedgerJournal {
  readonly key = rkeys.ledgerJournal();
  private readonly consumer = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private groupReady = false;
  private lastClaim = 0;
  private lastForget = Date.now();
  private failing = false;
  /** Figures for metrics and tests. */
  readonly stats = { drained: 0, batches: 0, claimed: 0, failedBatches: 0 };

  /** ioredis prefixes the key of most commands but not XGROUP's or XINFO's. */
  private readonly prefixedKey: string;

  constructor(private readonly db: Db, private readonly redis: RedisClient, private readonly log?: Logger) {
    this.prefixedKey = (redis.options.keyPrefix ?? '') + this.key;
  }

  entry(e: JournalEntry): string {
    return JSON.stringify(e);
  }

  /** Append an entry that moves no money (a usage row of a call that cost nothing). */
  async append(e: JournalEntry): Promise<void> {
    await this.redis.xadd(this.key, '*', 'e', this.entry(e));
    this.kick();
  }

  /** Drain soon: appends of the same tick go out as one batch. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
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
    await this.pass(true);
    while ((await this.pass(false)) > 0);
  }

  async stop(timeoutMs = 5_000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.race([this.flush().catch(() => undefined), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  private async loop(tick: boolean): Promise<void> {
    try {
      let n = await this.pass(tick || this.failing);
      while (n > 0 || this.again) {
        this.again = false;
        n = await this.pass(false);
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

  /** One batch of new entries; with `sweep`, first this consumer's unacknowledged ones and, now and then, abandoned ones. */
  private async pass(sweep: boolean): Promise<number> {
    try {
      return await this.passOnce(sweep);
    } catch (err) {
      // The stream or its group is gone (Redis lost its data, a key flush): make it again and go on.
      if (!String((err as Error).message).includes('NOGROUP')) throw err;
      this.groupReady = false;
      return this.passOnce(sweep);
    }
  }

  private async passOnce(sweep: boolean): Promise<number> {
    await this.ensureGroup();
    let n = 0;
    if (sweep) {
      n += await this.write(await this.read('0'));
      if (Date.now() - this.lastClaim >= CLAIM_IDLE_MS / 4) {
        this.lastClaim = Date.now();
        const claimed = await this.claim();
        this.stats.claimed += claimed.length;
        n += await this.write(claimed);
      }
      if (Date.now() - this.lastForget >= FORGET_CONSUMER_MS) await this.forgetConsumers();
    }
    n += await this.write(await this.read('>'));
    return n;
  }

  private async ensureGroup(): Promise<void> {
    if (this.groupReady) return;
    try {
      // From the start of the stream: entries appended before the group existed are drained too.
      await this.redis.xgroup('CREATE', this.prefixedKey, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
    this.groupReady = true;
  }

  private async read(from: '0' | '>'): Promise<StreamEntry[]> {
    const res = (await this.redis.xreadgroup('GROUP', GROUP, this.consumer, 'COUNT', BATCH, 'STREAMS', this.key, from)) as
      | Array<[string, StreamEntry[]]>
      | null;
    return res?.[0]?.[1] ?? [];
  }

  private async claim(): Promise<StreamEntry[]> {
    const res = (await this.redis.xautoclaim(this.key, GROUP, this.consumer, CLAIM_IDLE_MS, '0-0', 'COUNT', BATCH)) as [string, StreamEntry[], string[]?];
    return res[1] ?? [];
  }

  private async forgetConsumers(): Promise<void> {
    this.lastForget = Date.now();
    const rows = (await this.redis.xinfo('CONSUMERS', this.prefixedKey, GROUP)) as Array<Array<string | number>>;
    for (const row of rows) {
      const info: Record<string, string | number> = {};
      for (let i = 0; i + 1 < row.length; i += 2) info[String(row[i])] = row[i + 1];
      if (info.name !== this.consumer && Number(info.pending) === 0 && Number(info.idle) > FORGET_CONSUMER_MS) {
        await this.redis.xgroup('DELCONSUMER', this.prefixedKey, GROUP, String(info.name));
      }
    }
  }

  /** Ledger rows first, then usage rows, then acknowledge and delete: a crash anywhere replays into no-ops. */
  private async write(entries: StreamEntry[]): Promise<number> {
    if (entries.length === 0) return 0;
    const ids: string[] = [];
    const ledger: LedgerDoc[] = [];
    const usage: UsageDoc[] = [];
    for (const [id, fields] of entries) {
      ids.push(id);
      if (!fields) continue; // deleted while pending: already written
      const raw = fields[fields.indexOf('e') + 1];
      try {
        const e = JSON.parse(raw) as JournalEntry;
        if (e.l) ledger.push(revive(e.l as unknown as Record<string, unknown>) as unknown as LedgerDoc);
        if (e.u) usage.push(revive(e.u as unknown as Record<string, unknown>) as unknown as UsageDoc);
      } catch (err) {
        this.log?.error('ledger journal entry unreadable; dropped', { id, raw, err });
      }
    }
    try {
      await insertIgnoringDuplicates(this.db.Ledger.collection as never, ledger);
      await insertIgnoringDuplicates(this.db.Usage.collection as never, usage);
    } catch (err) {
      this.stats.failedBatches++;
      throw err;
    }
    failpoint('journal.before-ack');
    await this.redis.multi().xack(this.key, GROUP, ...ids).xdel(this.key, ...ids).exec();
    this.stats.drained += ids.length;
    this.stats.batches++;
    return ids.length;
  }
}
