import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { ConsoleState, CCtx } from '../context';
import { html, type Html } from '../html';
import { page } from '../layout';
import { errorFor, fieldErrors, formError, queryValues, type FieldErrors } from '../forms';
import { parseInput } from '../../../domain/validation';
import { cost } from '../money';
import { Day, dayRange, when } from '../time';
import { GatewayError } from '../../../domain/errors';
import type { UsageDoc } from '../../../capabilities/usage/store';
import { DEFAULT_WINDOW_MS, EXPORT_CAP, rowView, usageCsvStream } from '../../routes/usage';
import type { UsageFilter } from '../../../capabilities/usage/usage-query';
import { currentAccount } from '../access';
import type { ConsoleServices } from '../services';

const STATUSES = ['success', 'error', 'interrupted', 'rejected', 'in_flight'] as const;
const Filters = z.object({
  from: Day.optional(),
  to: Day.optional(),
  key: z.string().max(100).optional(),
  model: z.string().max(200).optional(),
  status: z.enum(STATUSES).optional(),
  before: z.string().regex(/^\d{1,15}\.[\w:-]{1,200}$/).optional(),
});
const PAGE_SIZE = 50;
const FILTER_MESSAGES = {
  from: 'Pick a start date, or leave it empty for 30 days ago.',
  to: 'Pick an end date, or leave it empty for today.',
  status: 'Pick a status from the list.',
  before: 'That page link is out of date: start again from the first page.',
  key: 'Pick a key from the list.',
  model: 'Pick a model from the list.',
};
const STATUS_WORDS: Record<string, string> = { success: 'succeeded', error: 'failed', interrupted: 'interrupted', rejected: 'rejected', in_flight: 'in progress' };
/** "25 images", "1 image", "12.5 seconds": the unit in words, plural when it is not one. */
export function units(count: number, type: string | null): string {
  const word = (type ?? 'unit').replace(/_/g, ' ');
  const plural = count === 1 ? word : /s$/.test(word) ? word : /(ch|sh|x)$/.test(word) ? `${word}es` : `${word}s`;
  return `${count.toLocaleString('en-US')} ${plural}`;
}
type Filters = z.infer<typeof Filters>;


/** The filter form's query as a usage filter (`to` is inclusive of that day), or the form's errors. */
function readFilters(ctx: CCtx): { raw: Partial<Filters>; filter?: UsageFilter; errors?: FieldErrors } {
  try {
    const raw = parseInput('query', Filters, queryValues(ctx));
    const { from, to } = dayRange(raw.from, raw.to, DEFAULT_WINDOW_MS);
    return { raw, filter: { from: from!, to: to!, keyId: raw.key, model: raw.model, status: raw.status } };
  } catch (err) {
    return { raw: ctx.query as Partial<Filters>, errors: fieldErrors(err, ['from', 'to', 'key', 'model', 'status'], FILTER_MESSAGES) };
  }
}

export function usageRow(r: UsageDoc): Html {
  return html`<tr><td>${when(r.created_at, { seconds: true })}</td><td>${r.key_name ?? ''}${r.key_prefix ? '' : ''}</td><td>${r.model ?? ''}</td><td><span class="status status-${r.status}">${STATUS_WORDS[r.status] ?? r.status}</span>${r.error_code ? html` <small>${r.error_code}</small>` : ''}</td>
<td class="num">${r.input_tokens || r.output_tokens ? `${r.input_tokens.toLocaleString('en-US')} in / ${r.output_tokens.toLocaleString('en-US')} out` : '—'}</td><td class="num">${r.unit_count ? units(r.unit_count, r.unit_type) : '—'}</td>
<td class="num">${cost(r.status === 'in_flight' ? r.reserved_nano : r.cost_nano)}</td><td class="num">${r.latency_ms.toLocaleString('en-US')} ms</td>
<td><a href="/console/lookup?id=${r.request_id}"><code>${r.request_id}</code></a>${r.task_id ? html`<br><a href="/console/tasks/${r.task_id}"><code>${r.task_id}</code></a>` : ''}</td></tr>`;
}

function filterForm(ctx: CCtx, keys: Array<{ id: string; name: string }>, models: string[], raw: Partial<Filters>, errors?: FieldErrors): Html {
  const opt = (v: string, label: string, cur?: string) => html`<option value="${v}"${v === (cur ?? '') ? html` selected` : ''}>${label}</option>`;
  const qs = new URLSearchParams(Object.entries(raw).filter(([k, v]) => v && k !== 'before') as [string, string][]).toString();
  return html`<form method="get" action="/console/usage" class="card filters" novalidate>
${formError(errors)}
<div class="field${errors?.from ? ' has-error' : ''}"><label for="f-from">From (UTC day)</label><input id="f-from" type="date" name="from" value="${raw.from ?? ''}">${errorFor(errors, 'from')}</div>
<div class="field${errors?.to ? ' has-error' : ''}"><label for="f-to">To (UTC day)</label><input id="f-to" type="date" name="to" value="${raw.to ?? ''}">${errorFor(errors, 'to')}</div>
<div class="field"><label for="f-key">Key</label><select id="f-key" name="key">${opt('', 'All keys', raw.key)}${keys.map((k) => opt(k.id, k.name, raw.key))}</select></div>
<div class="field"><label for="f-model">Model</label><select id="f-model" name="model">${opt('', 'All models', raw.model)}${models.map((m) => opt(m, m, raw.model))}</select></div>
<div class="field${errors?.status ? ' has-error' : ''}"><label for="f-status">Status</label><select id="f-status" name="status">${opt('', 'Any status', raw.status)}${STATUSES.map((s) => opt(s, STATUS_WORDS[s], raw.status))}</select>${errorFor(errors, 'status')}</div>
<div class="field buttons"><button type="submit" class="primary">Filter</button> <a class="button" href="/console/usage/export.csv${qs ? `?${qs}` : ''}" download>Export CSV</a></div>
</form>`;
}

/** Newer/older links: the cursor travels in the query with the filters. */
function pager(ctx: CCtx, raw: Partial<Filters>, shown: number, next: string | null): Html {
  const base = Object.entries(raw).filter(([k, v]) => v && k !== 'before') as [string, string][];
  const link = (before?: string) => `/console/usage?${new URLSearchParams(before ? [...base, ['before', before]] : base).toString()}`;
  if (!raw.before && !next) return html`<p class="hint">${shown === 0 ? '' : `${shown} call${shown === 1 ? '' : 's'}.`}</p>`;
  return html`<nav class="pager" aria-label="Pages" data-testid="pager"><span class="hint">${shown} calls on this page, newest first.</span>
<span>${raw.before ? html`<a class="button" href="${link()}">Newest</a> ` : ''}${next ? html`<a class="button" rel="next" href="${link(next)}" data-testid="older">Older calls →</a>` : ''}</span></nav>`;
}

export function usageRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  router.get('/console/usage', signedIn, async (ctx) => {
    const accountId = currentAccount(ctx);
    const keys = (await svc.deps.keys.listByAccount(accountId)).map((k) => ({ id: k._id, name: `${k.name} (…${svc.deps.keys.tailOf(k) ?? k.prefix})` }));
    const models = svc.deps.catalogue().models.map((m) => m.id);
    const { raw, filter, errors } = readFilters(ctx);
    const { rows, next } = filter ? await svc.usageQuery.page(accountId, filter, PAGE_SIZE, raw.before) : { rows: [] as UsageDoc[], next: null };
    if (errors) ctx.status = 400;
    ctx.type = 'html';
    ctx.body = page(ctx, 'Usage', html`
<form method="get" action="/console/lookup" class="card lookup" role="search">
  <label for="f-id">Find a call by request id (<code>x-gateway-trace</code>) or task id</label>
  <div class="row"><input id="f-id" name="id" placeholder="req_… or task_…" required><button type="submit">Find</button></div>
</form>
${filterForm(ctx, keys, models, raw, errors)}
<div class="table-wrap"><table class="usage"><thead><tr><th>When</th><th>Key</th><th>Model</th><th>Status</th><th class="num">Tokens</th><th class="num">Units</th><th class="num">Cost</th><th class="num">Latency</th><th>Request / task</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="9" class="muted">${Object.keys(raw).some((k) => k !== 'before' && (raw as Record<string, unknown>)[k]) ? 'No calls match these filters. Widen the dates or clear a filter.' : 'No calls in the last 30 days. Every call made with one of your keys appears here, with its tokens, cost and request id.'}</td></tr>` : rows.map(usageRow)}</tbody></table></div>
${pager(ctx, raw, rows.length, next)}`);
  });

  router.get('/console/usage/export.csv', signedIn, async (ctx) => {
    const accountId = currentAccount(ctx);
    const { filter, errors } = readFilters(ctx);
    if (!filter) throw new GatewayError('invalid_request', Object.values(errors ?? {})[0] ?? 'Check the filters and try again.', { status: 400 });
    if ((await svc.usageQuery.count(accountId, filter, EXPORT_CAP + 1)) > EXPORT_CAP) ctx.set('x-truncated', 'true');
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('content-disposition', 'attachment; filename="usage.csv"');
    ctx.body = usageCsvStream(await svc.usageQuery.cursor(accountId, filter, EXPORT_CAP, rowView));
  });

  router.get('/console/lookup', signedIn, async (ctx) => {
    const id = typeof ctx.query.id === 'string' ? ctx.query.id.trim() : '';
    const p = ctx.state.session!.principal;
    const scope = p.kind === 'operator' ? null : (ctx.state.managed ?? []).map((a) => a.id);
    const row = id ? await svc.callLog.row(id, scope) : null;
    if (!row) {
      ctx.status = 404;
      ctx.type = 'html';
      ctx.body = page(ctx, 'Call not found', html`<p class="form-error" role="alert">No call with request id or task id <code>${id}</code> in your accounts.</p><p><a href="/console/usage">Back to usage</a></p>`);
      return;
    }
    ctx.type = 'html';
    ctx.body = page(ctx, 'Call', html`<section class="card"><dl class="facts">
<dt>Request id</dt><dd><code data-testid="request-id">${row.request_id}</code></dd>
${row.task_id ? html`<dt>Task</dt><dd><a href="/console/tasks/${row.task_id}"><code>${row.task_id}</code></a></dd>` : ''}
<dt>When</dt><dd>${when(row.created_at, { seconds: true })}</dd><dt>Endpoint</dt><dd>${row.endpoint}</dd><dt>Model</dt><dd>${row.model ?? ''}</dd>
<dt>Key</dt><dd>${row.key_name ?? ''} ${row.key_prefix ? html`<code>${row.key_prefix}…</code>` : ''}</dd>
<dt>Status</dt><dd><span class="status status-${row.status}" data-testid="call-status" data-status="${row.status}">${STATUS_WORDS[row.status] ?? row.status}</span></dd>
${row.error_code ? html`<dt>Error</dt><dd>${row.error_message ?? ''} <small class="muted">(${row.error_code})</small></dd>` : ''}
<dt>Tokens</dt><dd>${row.input_tokens.toLocaleString('en-US')} in, ${row.output_tokens.toLocaleString('en-US')} out, ${row.cached_tokens.toLocaleString('en-US')} cached</dd>
${row.unit_count ? html`<dt>Units</dt><dd>${units(row.unit_count, row.unit_type)}</dd>` : ''}
<dt>Cost</dt><dd>${cost(row.status === 'in_flight' ? row.reserved_nano : row.cost_nano)}</dd>
<dt>Latency</dt><dd>${row.latency_ms} ms</dd><dt>Attempts</dt><dd>${row.attempts_count}</dd>
</dl></section><p><a href="/console/usage">Back to usage</a></p>`);
  });
}
