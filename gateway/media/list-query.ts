import { errors } from '../../domain/errors';
import { statesFor, type TaskKind, type TaskState } from '../../domain/media/task';
import type { Db, TaskDoc } from '../../infra/mongo';

/**
 * Task lists (spec 2 sections 4.1, 4.2, 4.4): `status` (comma list, default
 * all), `from`/`to` (Unix seconds, RFC 3339 or YYYY-MM-DD; a `to` date
 * excludes that day), `limit` 1..100 default 30, `cursor` from `next_cursor`.
 * Newest first.
 */
export interface ListQuery {
  states: TaskState[];
  from?: Date;
  to?: Date;
  limit: number;
  cursor?: { at: number; id: string };
}

function parseTime(raw: string, param: string, endOfDay: boolean): Date {
  // An unencoded `+` of an RFC 3339 offset arrives as a space.
  const value = raw.replace(/ (\d{2}:?\d{2})$/, '+$1');
  if (/^\d+$/.test(value)) return new Date(Number(value) * 1000);
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const d = new Date(`${value}T00:00:00Z`);
    if (!Number.isNaN(d.getTime())) return d; // `to` as a date means "before that day"
  }
  const d = new Date(value);
  if (/^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(d.getTime())) return d;
  void endOfDay;
  throw errors.invalidRequest(`${param} must be Unix seconds, RFC 3339 or YYYY-MM-DD`, param);
}

export function parseListQuery(q: Record<string, unknown>, kind: TaskKind, allowed: string[], opts: { maxLimit?: number } = {}): ListQuery {
  const one = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : Array.isArray(q[k]) ? String((q[k] as string[])[0]) : undefined);
  const statusParam = one('status') ?? 'all';
  const states = new Set<TaskState>();
  for (const s of statusParam.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (s !== 'all' && !allowed.includes(s)) throw errors.invalidRequest(`status must be a comma list of ${[...allowed, 'all'].join(', ')}`, 'status');
    for (const st of statesFor(kind, s)) states.add(st);
  }
  const maxLimit = opts.maxLimit ?? 100;
  const limitRaw = one('limit');
  const limit = limitRaw === undefined ? Math.min(30, maxLimit) : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) throw errors.invalidRequest(`limit must be an integer from 1 to ${maxLimit}`, 'limit');
  const query: ListQuery = { states: [...states], limit };
  const from = one('from');
  const to = one('to');
  if (from) query.from = parseTime(from, 'from', false);
  if (to) query.to = parseTime(to, 'to', true);
  const cursor = one('cursor');
  if (cursor) {
    const m = /^(\d+):(.+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!m) throw errors.invalidRequest('cursor is not a next_cursor value of this list', 'cursor');
    query.cursor = { at: Number(m[1]), id: m[2] };
  }
  return query;
}

/** One page of an account's tasks in the given collections, and the cursor of the next page (null at the end). */
export async function listTasks(db: Db, accountId: string, endpoints: string[], q: ListQuery): Promise<{ items: TaskDoc[]; nextCursor: string | null }> {
  const filter: Record<string, unknown> = { account_id: accountId, endpoint: { $in: endpoints }, state: { $in: q.states } };
  const created: Record<string, Date> = {};
  if (q.from) created.$gte = q.from;
  if (q.to) created.$lt = q.to;
  if (Object.keys(created).length) filter.created_at = created;
  if (q.cursor) {
    // Strictly after the cursor in (created_at desc, _id desc) order, ties included.
    const at = new Date(q.cursor.at);
    filter.$or = [{ created_at: { $lt: at } }, { created_at: at, _id: { $lt: q.cursor.id } }];
  }
  const after = await db.Task.find(filter).sort({ created_at: -1, _id: -1 }).limit(q.limit + 1).lean<TaskDoc[]>();
  const items = after.slice(0, q.limit);
  const more = after.length > q.limit;
  const last = items[items.length - 1];
  return { items, nextCursor: more && last ? Buffer.from(`${last.created_at.getTime()}:${last._id}`).toString('base64url') : null };
}

export const unix = (d: Date | null | undefined) => (d ? Math.floor(d.getTime() / 1000) : null);
