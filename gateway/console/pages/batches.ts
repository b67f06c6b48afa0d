import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html } from '../html';
import { page } from '../layout';
import { formatCredits } from '../../../domain/money';
import { GatewayError } from '../../../domain/errors';
import { assertManages, currentAccount } from '../access';
import type { ConsoleServices } from '../services';
import { BatchService } from '../../../capabilities/batches/service';
import type { BatchDoc } from '../../../capabilities/batches/store';

const when = (d: Date | null) => (d ? new Date(d).toISOString().replace('T', ' ').slice(0, 19) : '');
const LIVE = new Set(['validating', 'in_progress', 'finalizing', 'cancelling']);

/** The account's batches (OpenAI and Message Batches) with their progress and links to their output (docs/batches.md). */
export function batchRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const batches = new BatchService(svc.deps);
  const fileLink = (b: BatchDoc, role: 'output' | 'error', id: string | null) =>
    id ? html`<a href="/console/batches/${b._id}/${role}" download="${b._id}_${role}.jsonl">${role}</a>` : '';
  const row = (b: BatchDoc) => {
    const done = b.completed + b.failed;
    const pct = b.total ? Math.floor((done * 100) / b.total) : 0;
    return html`<tr data-batch="${b._id}"><td><code>${b._id}</code></td><td>${b.endpoint}</td>
<td><span class="status status-${b.status}">${b.status}</span></td>
<td><progress max="${b.total}" value="${done}">${pct}%</progress> <small>${done}/${b.total}${b.failed ? html`, ${b.failed} failed` : ''}</small></td>
<td>${when(b.created_at)}</td><td class="num">${formatCredits(b.cost_nano ?? 0)}</td>
<td>${b.api === 'anthropic' && !LIVE.has(b.status) ? html`<a href="/console/batches/${b._id}/results" download="${b._id}_results.jsonl">results</a>` : html`${fileLink(b, 'output', b.output_file_id)} ${fileLink(b, 'error', b.error_file_id)}`}</td></tr>`;
  };
  const list = async (ctx: CCtx) => batches.store.Batch.find({ account_id: currentAccount(ctx) }).sort({ created_at: -1 }).limit(100).lean<BatchDoc[]>();
  const rows = (items: BatchDoc[]) => {
    const live = items.some((b) => LIVE.has(b.status));
    return html`<tbody id="batch-rows"${live ? html` hx-get="/console/batches/rows" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}>${
      items.length ? items.map(row) : html`<tr><td colspan="7" class="muted">No batches yet. A batch sends many requests at once through the batch API of the OpenAI or Anthropic SDK; each one appears here with its progress and its results to download.</td></tr>`}</tbody>`;
  };

  router.get('/console/batches', signedIn, async (ctx) => {
    const items = await list(ctx);
    ctx.type = 'html';
    ctx.body = page(ctx, 'Batches', html`
<div class="table-wrap"><table><thead><tr><th>Batch</th><th>Endpoint</th><th>Status</th><th>Progress</th><th>Created</th><th class="num">Credits</th><th>Output</th></tr></thead>
${rows(items)}</table></div>`);
  });
  router.get('/console/batches/rows', signedIn, async (ctx) => {
    ctx.type = 'html';
    ctx.body = rows(await list(ctx)).value;
  });
  router.get('/console/batches/:id/:role', signedIn, async (ctx) => {
    const b = await batches.store.Batch.findById(ctx.params.id).lean<BatchDoc>();
    if (!b) throw new GatewayError('not_found', `no batch ${ctx.params.id}`, { status: 404 });
    await assertManages(svc, ctx, b.account_id, `batch ${b._id}`);
    const role = ctx.params.role;
    let body: string;
    if (role === 'results' && b.api === 'anthropic') body = await batches.messageResults(b.account_id, b._id);
    else if (role === 'output' && b.output_file_id) body = await batches.fileContent(b.account_id, b.output_file_id);
    else if (role === 'error' && b.error_file_id) body = await batches.fileContent(b.account_id, b.error_file_id);
    else throw new GatewayError('not_found', `batch ${b._id} has no ${role} file`, { status: 404 });
    ctx.type = 'application/jsonl';
    ctx.set('content-disposition', `attachment; filename="${b._id}_${role}.jsonl"`);
    ctx.body = body;
  });
}
