import Router from '@koa/router';
import { z } from 'zod';
import { InstantString } from '../../domain/instant';
import { first } from '../media/list-query';
import { validQuery } from '../middleware/validate';
import { formatCredits } from '../../domain/money';
import type { UsageDoc } from '../../infra/mongo';
import type { GatewayDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';

/** Rows default to the last 30 days; the export is capped at 10000 rows (spec 2 sections 4.8, 8). */
export const DEFAULT_WINDOW_MS = 30 * 24 * 3600 * 1000;
export const EXPORT_CAP = 10_000;

/** CSV export columns, in the order of spec 2 section 2.5. */
export const CSV_COLUMNS = [
  'id', 'created_at', 'key_name', 'key_prefix', 'model', 'status', 'error_code', 'error_message', 'input_tokens',
  'output_tokens', 'cached_tokens', 'unit_count', 'unit_type', 'cost_usd', 'latency_ms', 'request_id', 'task_id',
  'submitted_at', 'attempts_count', 'result_urls', 'result_expires_at',
] as const;

const UsageQuery = z.object({
  from: z.preprocess(first, InstantString).optional(),
  to: z.preprocess(first, InstantString).optional(),
  limit: z.preprocess(first, z.coerce.number({ error: 'must be an integer from 0 to 1000' }).int('must be an integer from 0 to 1000').min(0, 'must be an integer from 0 to 1000').max(1000, 'must be an integer from 0 to 1000')).default(100),
});

function window(ctx: Ctx): { from: Date; to: Date; limit: number } {
  const q = validQuery(ctx, UsageQuery);
  const to = q.to ?? new Date();
  return { from: q.from ?? new Date(to.getTime() - DEFAULT_WINDOW_MS), to, limit: q.limit };
}

export function rowView(r: UsageDoc): Record<(typeof CSV_COLUMNS)[number], string | number | null> {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: r._id, created_at: iso(r.created_at), key_name: r.key_name, key_prefix: r.key_prefix, model: r.model,
    status: r.status, error_code: r.error_code, error_message: r.error_message, input_tokens: r.input_tokens,
    output_tokens: r.output_tokens, cached_tokens: r.cached_tokens, unit_count: r.unit_count, unit_type: r.unit_type,
    cost_usd: formatCredits(r.status === 'in_flight' ? r.reserved_nano : r.cost_nano), latency_ms: r.latency_ms,
    request_id: r.request_id, task_id: r.task_id, submitted_at: iso(r.submitted_at), attempts_count: r.attempts_count,
    result_urls: (r.result_urls ?? []).join('|'), result_expires_at: iso(r.result_expires_at),
  };
}

function csvCell(v: string | number | null): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Usage logs of the account: summary with rows, and the CSV export. */
export function usageRoutes(deps: GatewayDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const auth = authenticate(deps, { methods: 'all', billable: false, touchLastUsed: false });

  router.get('/api/v1/usage', auth, rateLimit(), async (ctx) => {
    const { from, to, limit } = window(ctx);
    await deps.usage.flush();
    const filter = { account_id: ctx.state.auth!.account.id, created_at: { $gte: from, $lt: to } };
    const rows = await deps.db.Usage.find(filter, { status: 1, cost_nano: 1 }).lean<Pick<UsageDoc, 'status' | 'cost_nano'>[]>();
    const byStatus: Record<string, number> = { success: 0, error: 0, interrupted: 0, rejected: 0, in_flight: 0 };
    let cost = 0;
    for (const r of rows) {
      byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
      cost += r.cost_nano;
    }
    const recent = limit ? await deps.db.Usage.find(filter).sort({ created_at: -1 }).limit(limit).lean<UsageDoc[]>() : [];
    ctx.body = {
      object: 'usage',
      from: Math.floor(from.getTime() / 1000),
      to: Math.floor(to.getTime() / 1000),
      // One row per public call, rejected ones included; failed attempts across channels are not rows.
      total_requests: rows.length,
      total_cost_usd: formatCredits(cost),
      by_status: byStatus,
      data: recent.map(rowView),
    };
  });

  router.get('/api/v1/usage/export', auth, rateLimit(), async (ctx) => {
    const { from, to } = window(ctx);
    await deps.usage.flush();
    const rows = await deps.db.Usage.find({ account_id: ctx.state.auth!.account.id, created_at: { $gte: from, $lt: to } })
      .sort({ created_at: -1 })
      .limit(EXPORT_CAP + 1)
      .lean<UsageDoc[]>();
    if (rows.length > EXPORT_CAP) ctx.set('x-truncated', 'true');
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('content-disposition', 'attachment; filename="usage.csv"');
    ctx.body = usageCsv(rows.slice(0, EXPORT_CAP));
  });
  return router;
}

/** The CSV export body (header line first), as the API and the console serve it. */
export function usageCsv(rows: UsageDoc[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) {
    const v = rowView(r);
    lines.push(CSV_COLUMNS.map((c) => csvCell(v[c])).join(','));
  }
  return lines.join('\n') + '\n';
}
