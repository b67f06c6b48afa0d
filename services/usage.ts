import type { Db, UsageDoc } from '../infra/mongo';
import type { Logger } from '../infra/logger';

export type UsageRow = Partial<UsageDoc> & Pick<UsageDoc, '_id' | 'account_id' | 'endpoint' | 'status' | 'request_id'>;

const DEFAULTS: Omit<UsageDoc, '_id' | 'account_id' | 'endpoint' | 'status' | 'request_id' | 'created_at'> = {
  key_id: null, key_name: null, key_prefix: null, model: null, error_code: null, error_message: null,
  input_tokens: 0, output_tokens: 0, cached_tokens: 0, server_tool_calls: 0, unit_count: 0, unit_type: null,
  cost_nano: 0, reserved_nano: 0, latency_ms: 0, task_id: null, submitted_at: null, attempts_count: 1,
  result_urls: [], result_expires_at: null, usage_estimated: false,
};

/** A complete row (defaults for what the caller left out). */
export function usageDoc(row: UsageRow): UsageDoc {
  return { ...DEFAULTS, created_at: new Date(), ...row } as UsageDoc;
}

/**
 * One usage row per terminal outcome of a public call. Rows are buffered and
 * written in batches off the request path; `flush()` drains the buffer
 * (tests and shutdown call it).
 */
export class UsageRecorder {
  private buffer: UsageDoc[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> = Promise.resolve();

  /** `alsoFlush`: rows written ahead elsewhere (the ledger journal) that a reader of rows must see too. */
  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly batchMs = 25,
    private readonly alsoFlush?: () => Promise<void>,
  ) {}

  record(row: UsageRow): void {
    this.buffer.push(usageDoc(row));
    if (this.buffer.length >= 500) void this.flush();
    else if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.batchMs);
  }

  /** Rows whose id already exists are kept as they are (an in-flight row is replaced with `replace`). */
  async replace(row: UsageRow): Promise<void> {
    await this.db.Usage.replaceOne({ _id: row._id }, { ...DEFAULTS, created_at: new Date(), ...row }, { upsert: true });
  }

  /**
   * FerretDB stops an unordered batch at its first duplicate (MongoDB goes on),
   * so after a duplicate the rest of the batch is written one by one.
   */
  private async insertAll(rows: UsageDoc[]): Promise<void> {
    try {
      await this.db.Usage.collection.insertMany(rows as never, { ordered: false });
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) {
        this.log.error('usage rows not written', { err, rows: rows.length });
        return;
      }
    }
    for (const row of rows) {
      await this.db.Usage.collection.insertOne(row as never).catch((err: unknown) => {
        if ((err as { code?: number }).code !== 11000) this.log.error('usage row not written', { err, id: row._id });
      });
    }
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = this.buffer;
    this.buffer = [];
    const write = rows.length ? this.insertAll(rows) : Promise.resolve();
    this.inflight = this.inflight.then(() => write);
    await this.inflight;
    await this.alsoFlush?.();
  }
}
