import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html, type Html } from '../html';
import { page } from '../layout';
import { cost } from '../money';
import { FINAL_STATES, publicStatus, type TaskKind, type TaskState } from '../../domain/media/task';
import type { TaskDoc } from '../../infra/mongo';
import { assertManages, currentAccount } from '../access';
import type { ConsoleServices } from '../services';

const when = (d: Date | null) => (d ? d.toISOString().replace('T', ' ').slice(0, 19) : '');
const isFinal = (t: TaskDoc) => FINAL_STATES.has(t.state as TaskState);
const statusOf = (t: TaskDoc) => publicStatus(t.kind as TaskKind, t.state as TaskState);

export async function openTasks(svc: ConsoleServices, accountId: string, limit: number): Promise<TaskDoc[]> {
  return svc.deps.db.Task.find({ account_id: accountId, state: { $in: ['queued', 'running'] } }).sort({ created_at: -1 }).limit(limit).lean<TaskDoc[]>();
}

export function taskRow(t: TaskDoc, withCost = true): Html {
  return html`<tr data-task="${t._id}"><td><a href="/console/tasks/${t._id}"><code>${t._id}</code></a></td><td>${t.model}</td>
<td><span class="status status-${t.state}">${statusOf(t)}</span>${t.progress !== null && !isFinal(t) ? html` <small>${t.progress}%</small>` : ''}</td>
<td>${when(t.created_at)}</td>${withCost ? html`<td>${t.kind}</td><td class="num">${cost(isFinal(t) ? t.cost_nano : t.reserved_nano)}</td>` : ''}</tr>`;
}

function mediaOf(t: TaskDoc, url: string): 'image' | 'video' | 'audio' | 'link' {
  const ext = /\.([a-z0-9]{2,4})(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  if (ext && ['png', 'jpg', 'jpeg', 'webp', 'gif'].includes(ext)) return 'image';
  if (ext && ['mp4', 'webm', 'mov'].includes(ext)) return 'video';
  if (ext && ['mp3', 'wav', 'ogg', 'm4a', 'aac', 'flac'].includes(ext)) return 'audio';
  if (t.kind === 'image') return 'image';
  if (t.kind === 'video' || t.kind === 'avatar') return 'video';
  if (t.kind === 'music' || t.kind === 'speech' || t.kind === 'voice') return 'audio';
  return 'link';
}

/** Result previews: images inline, players for video and audio, expired links as plain text. */
export function preview(t: TaskDoc): Html {
  const r = t.result;
  if (!r || r.urls.length === 0) return html`<p class="muted">${isFinal(t) ? 'No result files.' : 'No result yet.'}</p>`;
  const expired = r.links_expired || (r.expires_at !== null && new Date(r.expires_at).getTime() <= Date.now());
  if (expired) {
    return html`<p class="muted">The result links expired${r.expires_at ? html` on ${when(new Date(r.expires_at))}` : ''}:</p>
<ul class="expired-links">${r.urls.map((u) => html`<li><code>${u}</code></li>`)}</ul>`;
  }
  return html`<div class="previews">${r.urls.map((u) => {
    const kind = mediaOf(t, u);
    if (kind === 'image') return html`<figure><a href="${u}" rel="noreferrer"><img src="${u}" alt="Result image of ${t._id}" loading="lazy"></a></figure>`;
    if (kind === 'video') return html`<figure><video src="${u}" controls preload="metadata"></video></figure>`;
    if (kind === 'audio') return html`<figure><audio src="${u}" controls preload="none"></audio></figure>`;
    return html`<p><a href="${u}" rel="noreferrer">${u}</a></p>`;
  })}</div>${r.expires_at ? html`<p class="hint">Links work until ${when(new Date(r.expires_at))} UTC.</p>` : ''}`;
}

function detail(ctx: CCtx, svc: ConsoleServices, t: TaskDoc): Html {
  const operator = ctx.state.session?.principal.kind === 'operator';
  const ui = svc.deps.config.TEMPORAL_UI_URL;
  const live = !isFinal(t);
  return html`<section id="task-detail" class="card"${live ? html` hx-get="/console/tasks/${t._id}?fragment=1" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}>
<dl class="facts">
  <dt>Status</dt><dd><span class="status status-${t.state}" data-testid="task-status">${statusOf(t)}</span>${t.progress !== null && live ? html` (${t.progress}%)` : ''}</dd>
  <dt>Model</dt><dd>${t.model}</dd>
  <dt>Family</dt><dd>${t.kind} (${t.endpoint})</dd>
  <dt>Key</dt><dd>${t.key_name} <code>${t.key_prefix}…</code></dd>
  <dt>Submitted</dt><dd>${when(t.created_at)}</dd>
  <dt>Completed</dt><dd>${when(t.completed_at) || '—'}</dd>
  <dt>Cost</dt><dd>${cost(isFinal(t) ? t.cost_nano : t.reserved_nano)}${live ? ' (reserved)' : ''}</dd>
  <dt>Request id</dt><dd><a href="/console/lookup?id=${t.request_id}"><code>${t.request_id}</code></a></dd>
  ${t.error_code ? html`<dt>Error</dt><dd>${t.error_code}: ${t.error_message}</dd>` : ''}
  ${operator && ui ? html`<dt>Workflow</dt><dd><a href="${ui.replace(/\/$/, '')}/namespaces/${encodeURIComponent(svc.deps.config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(t._id)}" rel="noreferrer" target="_blank">Open in the Temporal UI</a></dd>` : ''}
</dl>
<h2>Result</h2>
${preview(t)}
</section>`;
}

export function taskRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const list = async (ctx: CCtx) => {
    const accountId = currentAccount(ctx);
    const status = typeof ctx.query.status === 'string' ? ctx.query.status : 'all';
    const filter: Record<string, unknown> = { account_id: accountId };
    if (status === 'open') filter.state = { $in: ['queued', 'running'] };
    else if (status === 'done') filter.state = { $in: [...FINAL_STATES] };
    const tasks = await svc.deps.db.Task.find(filter).sort({ created_at: -1 }).limit(100).lean<TaskDoc[]>();
    return { tasks, status, live: tasks.some((t) => !isFinal(t)) };
  };
  const rows = (tasks: TaskDoc[], live: boolean, status: string) =>
    html`<tbody id="task-rows"${live ? html` hx-get="/console/tasks/rows?status=${status}" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}>${
      tasks.length ? tasks.map((t) => taskRow(t)) : html`<tr><td colspan="6" class="muted">No tasks.</td></tr>`}</tbody>`;

  router.get('/console/tasks', signedIn, async (ctx) => {
    const { tasks, status, live } = await list(ctx);
    ctx.type = 'html';
    ctx.body = page(ctx, 'Tasks', html`
<form method="get" class="filters"><label for="f-status">Show</label>
<select id="f-status" name="status" data-autosubmit>${[['all', 'All tasks'], ['open', 'Open'], ['done', 'Finished']].map(([v, l]) => html`<option value="${v}"${v === status ? html` selected` : ''}>${l}</option>`)}</select>
<button type="submit" class="js-hide">Show</button></form>
<div class="table-wrap"><table><thead><tr><th>Task</th><th>Model</th><th>Status</th><th>Submitted</th><th>Family</th><th class="num">Credits</th></tr></thead>
${rows(tasks, live, status)}</table></div>`);
  });
  router.get('/console/tasks/rows', signedIn, async (ctx) => {
    const { tasks, status, live } = await list(ctx);
    ctx.type = 'html';
    ctx.body = rows(tasks, live, status).value;
  });
  router.get('/console/tasks/:id', signedIn, async (ctx) => {
    const t = await svc.deps.db.Task.findById(ctx.params.id).lean<TaskDoc>();
    if (!t) throw notFoundTask(ctx.params.id);
    await assertManages(svc, ctx, t.account_id, `task ${ctx.params.id}`);
    ctx.type = 'html';
    ctx.body = ctx.query.fragment ? detail(ctx, svc, t).value : page(ctx, `Task ${t._id}`, detail(ctx, svc, t));
  });
}

import { GatewayError } from '../../domain/errors';
const notFoundTask = (id: string) => new GatewayError('not_found', `no task ${id}`, { status: 404 });
