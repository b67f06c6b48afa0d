import type { Readable } from 'node:stream';
import Router from '@koa/router';
import { stringify } from 'csv-stringify';
import { z } from 'zod';
import { InstantString } from '../../domain/instant';
import { first } from '../../capabilities/media/list-query';
import { validQuery } from '../middleware/validate';
import { formatCredits } from '../../domain/money';
import { withUsageDefaults, type UsageDoc } from '../../capabilities/usage/store';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { CSV_COLUMNS, CSV_NUMBER_COLUMNS, rowView } from '../../capabilities/usage/usage-view';
import { neutraliseFormula } from '../../domain/csv-cell';
export { CSV_COLUMNS, rowView };

/** Rows default to the last 30 days; the export is capped at 10000 rows (spec 2 sections 4.8, 8). */
export const DEFAULT_WINDOW_MS = 30 * 24 * 3600 * 1000;
export const EXPORT_CAP = 10_000;

export const UsageQuery = z.object({
  from: z.preprocess(first, InstantString).optional(),
  to: z.preprocess(first, InstantString).optional(),
  limit: z.preprocess(first, z.coerce.number({ error: 'must be an integer from 0 to 1000' }).int('must be an integer from 0 to 1000').min(0, 'must be an integer from 0 to 1000').max(1000, 'must be an integer from 0 to 1000')).default(100),
});

function window(ctx: Ctx): { from: Date; to: Date; limit: number } {
  const q = validQuery(ctx, UsageQuery);
  const to = q.to ?? new Date();
  return { from: q.from ?? new Date(to.getTime() - DEFAULT_WINDOW_MS), to, limit: q.limit };
}

/**
 * Rows by status and the cost of the window, counted by the store however
 * many rows there are. Two aggregates of one accumulator each: FerretDB v1
 * computes only the first accumulator of a `$group` (the others come back 0).
 */
async function summarise(deps: ServiceDeps, filter: object): Promise<{ total: number; costNano: number; byStatus: Record<string, number> }> {
  const [counts, costs] = await Promise.all([
    deps.db.Usage.aggregate<{ _id: string; n: number }>([{ $match: filter }, { $group: { _id: '$status', n: { $sum: 1 } } }]),
    deps.db.Usage.aggregate<{ _id: null; cost: number }>([{ $match: filter }, { $group: { _id: null, cost: { $sum: '$cost_nano' } } }]),
  ]);
  const byStatus: Record<string, number> = { success: 0, error: 0, interrupted: 0, rejected: 0, in_flight: 0 };
  let total = 0;
  for (const g of counts) {
    byStatus[g._id] = (byStatus[g._id] ?? 0) + g.n;
    total += g.n;
  }
  return { total, costNano: costs[0]?.cost ?? 0, byStatus };
}

/** Usage logs of the account: summary with rows, and the CSV export. */
export function usageRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const auth = authenticate(deps, { methods: 'all', billable: false, touchLastUsed: false });

  router.get('/api/v1/usage', auth, rateLimit(), async (ctx) => {
    const { from, to, limit } = window(ctx);
    await deps.usage.flush();
    const filter = { account_id: ctx.state.auth!.account.id, created_at: { $gte: from, $lt: to } };
    const summary = await summarise(deps, filter);
    const recent = limit ? await deps.db.Usage.find(filter).sort({ created_at: -1 }).limit(limit).lean<UsageDoc[]>() : [];
    ctx.body = {
      object: 'usage',
      from: Math.floor(from.getTime() / 1000),
      to: Math.floor(to.getTime() / 1000),
      // One row per public call, rejected ones included; failed attempts across channels are not rows.
      total_requests: summary.total,
      total_cost_usd: formatCredits(summary.costNano),
      by_status: summary.byStatus,
      data: recent.map(rowView),
    };
  });

  router.get('/api/v1/usage/export', auth, rateLimit(), async (ctx) => {
    const { from, to } = window(ctx);
    await deps.usage.flush();
    const filter = { account_id: ctx.state.auth!.account.id, created_at: { $gte: from, $lt: to } };
    if ((await deps.db.Usage.countDocuments(filter).limit(EXPORT_CAP + 1)) > EXPORT_CAP) ctx.set('x-truncated', 'true');
    // Streamed from a cursor: the export never holds its rows in memory.
    const rows = deps.db.Usage.find(filter).sort({ created_at: -1 }).limit(EXPORT_CAP).lean<UsageDoc[]>().cursor({ transform: (r: UsageDoc) => rowView(withUsageDefaults(r)) });
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('content-disposition', 'attachment; filename="usage.csv"');
    ctx.body = usageCsvStream(rows);
  });
  return router;
}

/**
 * The CSV export body: rows already turned by `rowView`, streamed as the columns of spec 2 section 2.5 (the API and the
 * console). Text cells that a spreadsheet would run as a formula (a key name, a model, an error message starting with
 * `=`, `+`, `-`, `@`, a tab or a carriage return) get a leading `'`; the number columns are written as they are.
 */
export function usageCsvStream(rows: Readable): Readable {
  return rows.pipe(stringify({
    header: true,
    columns: [...CSV_COLUMNS],
    cast: { string: (value, ctx) => (ctx.header || CSV_NUMBER_COLUMNS.has(String(ctx.column)) ? value : neutraliseFormula(value)) },
  }));
}
