import { z } from 'zod';
import { InstantString } from '../../domain/instant';
import { parseInput } from '../../domain/validation';
import { statesFor, type TaskKind, type TaskState, type TaskDocument } from '../../domain/media/task';
import type { MediaModels } from './store';

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

/** The first value of a repeated query parameter; an empty one counts as absent. */
export const first = (v: unknown) => {
  const one = Array.isArray(v) ? v[0] : v;
  return one === '' ? undefined : one;
};
const QueryString = z.preprocess(first, z.string());

export function listQuerySchema(kind: TaskKind, allowed: string[], maxLimit: number) {
  const statusHint = `must be a comma list of ${[...allowed, 'all'].join(', ')}`;
  return z.object({
    status: QueryString.default('all').transform((raw, c) => {
      const states = new Set<TaskState>();
      for (const s of raw.split(',').map((x) => x.trim()).filter(Boolean)) {
        if (s !== 'all' && !allowed.includes(s)) {
          c.addIssue({ code: 'custom', message: statusHint });
          return z.NEVER;
        }
        for (const st of statesFor(kind, s)) states.add(st);
      }
      return [...states];
    }),
    limit: z.preprocess(first, z.coerce.number({ error: `must be an integer from 1 to ${maxLimit}` }).int(`must be an integer from 1 to ${maxLimit}`).min(1, `must be an integer from 1 to ${maxLimit}`).max(maxLimit, `must be an integer from 1 to ${maxLimit}`)).default(Math.min(30, maxLimit)),
    from: z.preprocess(first, InstantString).optional(),
    // A `to` date means "before that day": midnight of it is the exclusive bound.
    to: z.preprocess(first, InstantString).optional(),
    cursor: QueryString.optional().transform((raw, c) => {
      if (!raw) return undefined;
      const m = /^(\d+):(.+)$/.exec(Buffer.from(raw, 'base64url').toString('utf8'));
      if (!m) {
        c.addIssue({ code: 'custom', message: 'is not a next_cursor value of this list' });
        return z.NEVER;
      }
      return { at: Number(m[1]), id: m[2] };
    }),
  });
}

export function parseListQuery(q: Record<string, unknown>, kind: TaskKind, allowed: string[], opts: { maxLimit?: number } = {}): ListQuery {
  const { status, limit, from, to, cursor } = parseInput('query', listQuerySchema(kind, allowed, opts.maxLimit ?? 100), { ...q });
  return { states: status, limit, from, to, cursor };
}

/** One page of an account's tasks in the given collections, and the cursor of the next page (null at the end). */
export async function listTasks(db: MediaModels, accountId: string, endpoints: string[], q: ListQuery): Promise<{ items: TaskDocument[]; nextCursor: string | null }> {
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
  const after = await db.Task.find(filter).sort({ created_at: -1, _id: -1 }).limit(q.limit + 1).lean<TaskDocument[]>();
  const items = after.slice(0, q.limit);
  const more = after.length > q.limit;
  const last = items[items.length - 1];
  return { items, nextCursor: more && last ? Buffer.from(`${last.created_at.getTime()}:${last._id}`).toString('base64url') : null };
}

export const unix = (d: Date | null | undefined) => (d ? Math.floor(d.getTime() / 1000) : null);
