import type { Readable } from 'node:stream';
import { withUsageDefaults, type UsageModels, type UsageDoc } from './store';
import type { UsageRecorder } from './usage';

export interface UsageFilter {
  from: Date;
  to: Date;
  keyId?: string;
  model?: string;
  status?: UsageDoc['status'];
}

export interface SpendReport {
  /** `YYYY-MM-DD` (UTC), oldest first, one per day of the window, zero days included. */
  days: string[];
  /** Models by total spend, largest first, with their spend per day (nano), aligned with `days`. */
  models: Array<{ model: string; totalNano: number; perDay: number[] }>;
  totalNano: number;
}

const DAY_MS = 24 * 3600 * 1000;

/** Reading an account's usage rows: filtered lists and the spend report (one call by its id: capabilities/calllog/service.ts). */
export class UsageQuery {
  constructor(private readonly db: UsageModels, private readonly usage: UsageRecorder) {}

  private filter(accountId: string, f: UsageFilter): Record<string, unknown> {
    const q: Record<string, unknown> = { account_id: accountId, created_at: { $gte: f.from, $lt: f.to } };
    if (f.keyId) q.key_id = f.keyId;
    if (f.model) q.model = f.model;
    if (f.status) q.status = f.status;
    return q;
  }

  async rows(accountId: string, f: UsageFilter, limit: number): Promise<UsageDoc[]> {
    await this.usage.flush();
    return this.db.Usage.find(this.filter(accountId, f)).sort({ created_at: -1 }).limit(limit).lean<UsageDoc[]>();
  }

  /**
   * One page of the filtered rows, newest first, and the cursor of the next
   * page (`<created_at ms>.<row id>` of the last row; null at the end). The
   * cursor is exact under equal timestamps: (created_at, _id) descending.
   */
  async page(accountId: string, f: UsageFilter, limit: number, before?: string | null): Promise<{ rows: UsageDoc[]; next: string | null }> {
    await this.usage.flush();
    const q = this.filter(accountId, f);
    const c = before ? parseCursor(before) : null;
    if (c) q.$or = [{ created_at: { $lt: c.at } }, { created_at: c.at, _id: { $lt: c.id } }];
    const rows = await this.db.Usage.find(q).sort({ created_at: -1, _id: -1 }).limit(limit + 1).lean<UsageDoc[]>();
    const more = rows.length > limit;
    if (more) rows.length = limit;
    const last = rows[rows.length - 1];
    return { rows, next: more && last ? cursorOf(last.created_at, String(last._id)) : null };
  }

  /** The filtered rows, newest first, as a cursor (exports stream it); `transform` maps each row. */
  async cursor<T>(accountId: string, f: UsageFilter, limit: number, transform: (r: UsageDoc) => T): Promise<Readable> {
    await this.usage.flush();
    return this.db.Usage.find(this.filter(accountId, f)).sort({ created_at: -1 }).limit(limit).lean<UsageDoc[]>().cursor({ transform: (r: UsageDoc) => transform(withUsageDefaults(r)) });
  }

  /** How many rows match, counting no further than `cap`. */
  async count(accountId: string, f: UsageFilter, cap: number): Promise<number> {
    await this.usage.flush();
    return this.db.Usage.countDocuments(this.filter(accountId, f)).limit(cap);
  }

  async forKey(keyId: string, limit: number): Promise<UsageDoc[]> {
    await this.usage.flush();
    return this.db.Usage.find({ key_id: keyId }).sort({ created_at: -1 }).limit(limit).lean<UsageDoc[]>();
  }

  /** Spend (charged cost) per UTC day and model over the last `days` days, today included. */
  async spend(accountId: string, days = 30, now = new Date()): Promise<SpendReport> {
    await this.usage.flush();
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const start = today - (days - 1) * DAY_MS;
    const labels = Array.from({ length: days }, (_, i) => new Date(start + i * DAY_MS).toISOString().slice(0, 10));
    const rows = await this.db.Usage.find(
      { account_id: accountId, created_at: { $gte: new Date(start) }, cost_nano: { $gt: 0 } },
      { model: 1, cost_nano: 1, created_at: 1 },
    ).lean<Pick<UsageDoc, 'model' | 'cost_nano' | 'created_at'>[]>();
    const byModel = new Map<string, number[]>();
    let totalNano = 0;
    for (const r of rows) {
      const i = Math.floor((r.created_at.getTime() - start) / DAY_MS);
      if (i < 0 || i >= days) continue;
      const m = r.model ?? '(none)';
      const perDay = byModel.get(m) ?? byModel.set(m, new Array<number>(days).fill(0)).get(m)!;
      perDay[i] += r.cost_nano;
      totalNano += r.cost_nano;
    }
    const models = [...byModel.entries()]
      .map(([model, perDay]) => ({ model, perDay, totalNano: perDay.reduce((a, b) => a + b, 0) }))
      .sort((a, b) => b.totalNano - a.totalNano);
    return { days: labels, models, totalNano };
  }
}

/** A page cursor: the last row's time (ms) and id, so equal timestamps still page exactly. */
export function cursorOf(at: Date, id: string): string {
  return `${at.getTime()}.${id}`;
}

export function parseCursor(v: string): { at: Date; id: string } | null {
  const m = /^(\d{1,15})\.([\w:-]{1,200})$/.exec(v);
  return m ? { at: new Date(Number(m[1])), id: m[2] } : null;
}
