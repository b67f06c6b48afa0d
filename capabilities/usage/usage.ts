import { USAGE_DEFAULTS, type StoredUsage, type UsageModels, type UsageDoc } from './store';

export type { StoredUsage };
import type { Logger } from '../../platform/logger';
import { duplicatesOf } from '../../platform/batch-insert';
import { upsertRacing } from '../../platform/upsert';

export type UsageRow = Partial<UsageDoc> & Pick<UsageDoc, '_id' | 'account_id' | 'endpoint' | 'status' | 'request_id'>;

/** The row to write: the time added (unless set), the fields at their defaults left out (reads fill them in). */
export function usageDoc(row: UsageRow): StoredUsage {
  const doc: Record<string, unknown> = { created_at: new Date() };
  for (const k in row) {
    const v = (row as Record<string, unknown>)[k];
    if (v === undefined || isDefault(k, v)) continue;
    doc[k] = v;
  }
  return doc as StoredUsage;
}

function isDefault(k: string, v: unknown): boolean {
  const d = (USAGE_DEFAULTS as Record<string, unknown>)[k];
  if (d === undefined) return false;
  return Array.isArray(d) ? Array.isArray(v) && v.length === 0 : v === d;
}

/** Rows kept for a retry while the store is down; past this the oldest are logged and dropped. */
const MAX_PENDING = 50_000;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10_000;

/**
 * One usage row per terminal outcome of a public call. Rows are buffered and
 * written in batches off the request path; `flush()` drains the buffer
 * (readers of rows, tests and shutdown call it). A batch the store refuses
 * (an outage, a restart) stays buffered and is retried with backoff, so a
 * store outage of seconds loses no row; writing in the background never
 * throws (an unhandled rejection would take the process down).
 */
export class UsageRecorder {
  private buffer: StoredUsage[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> = Promise.resolve();
  private retryMs = 0;

  /** `alsoFlush`: rows written ahead elsewhere (the ledger journal) that a reader of rows must see too. */
  constructor(
    private readonly db: UsageModels,
    private readonly log: Logger,
    private readonly batchMs = 25,
    private readonly alsoFlush?: () => Promise<void>,
  ) {}

  record(row: UsageRow): void {
    this.buffer.push(usageDoc(row));
    if (this.buffer.length >= 500 && !this.retryMs) void this.writeBuffered();
    else if (!this.timer) this.timer = setTimeout(() => void this.writeBuffered(), this.retryMs || this.batchMs);
  }

  /**
   * Writes a row now unless one with its id exists (kept as it is: a later, final row is never turned
   * back). An insert uses the unique _id index; a replace (an update) makes FerretDB v1 read the whole
   * collection, which at tens of thousands of rows costs far more than the call.
   */
  async insertNew(row: UsageRow): Promise<void> {
    await this.db.Usage.collection.insertOne(usageDoc(row) as never).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 11000) throw err;
    });
  }

  /**
   * Writes the row whatever is there (an in-flight row turns final). Safe under races: two settlements
   * of one task, or one racing the drain's insert of the in-flight row, both end with the final row
   * (the loser of the insert race runs again and replaces; platform/upsert.ts).
   */
  async replace(row: UsageRow): Promise<void> {
    const doc = usageDoc(row);
    await upsertRacing(() => this.db.Usage.replaceOne({ _id: row._id }, doc, { upsert: true }));
  }

  /**
   * Writes the rows; returns those the store did not take (not a duplicate:
   * an outage). After a duplicate, rows the store did not report as written
   * or existing are written one by one (`duplicatesOf`).
   */
  private async insertAll(rows: StoredUsage[]): Promise<StoredUsage[]> {
    try {
      await this.db.Usage.collection.insertMany(rows as never, { ordered: false });
      return [];
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) return rows;
      if (duplicatesOf(err, rows.length).accounted) return [];
    }
    const left: StoredUsage[] = [];
    for (const row of rows) {
      await this.db.Usage.collection.insertOne(row as never).catch((err: unknown) => {
        if ((err as { code?: number }).code !== 11000) left.push(row);
      });
    }
    return left;
  }

  /** One write of everything buffered, after the previous one; rows refused are put back and retried later. */
  private writeBuffered(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = this.buffer;
    this.buffer = [];
    this.inflight = this.inflight.then(async () => {
      if (rows.length === 0) return;
      const left = await this.insertAll(rows).catch(() => rows);
      if (left.length === 0) {
        if (this.retryMs) this.log.info('usage rows written again after a store outage');
        this.retryMs = 0;
        return;
      }
      this.buffer = left.concat(this.buffer);
      if (this.buffer.length > MAX_PENDING) {
        const dropped = this.buffer.splice(0, this.buffer.length - MAX_PENDING);
        this.log.error('usage rows dropped: the store has refused writes for too long', { dropped: dropped.length, ids: dropped.slice(0, 20).map((r) => r._id) });
      }
      if (!this.retryMs) this.log.warn('usage rows not written; retrying', { rows: left.length });
      this.retryMs = Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, this.retryMs * 2));
      if (!this.timer) this.timer = setTimeout(() => void this.writeBuffered(), this.retryMs);
    });
    return this.inflight;
  }

  /** Writes what is buffered now (kept for a retry if refused), then drains the journal (which throws while the store refuses). */
  async flush(): Promise<void> {
    await this.writeBuffered();
    await this.alsoFlush?.();
  }

  /** Rows waiting for the store (metrics, shutdown). */
  pending(): number {
    return this.buffer.length;
  }
}
