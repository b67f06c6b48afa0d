import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html, type Html } from '../html';
import { page } from '../layout';
import { cost } from '../money';
import { FINAL_STATES, publicStatus, type TaskKind, type TaskState, type TaskDocument } from '../../../domain/media/task';
import { assertManages, currentAccount } from '../access';
import type { ConsoleServices } from '../services';

import { Day, dayRange, when } from '../time';
import { cursorOf, parseCursor } from '../../../capabilities/usage/usage-query';
import { z } from 'zod';
import { errorFor, fieldErrors, formError, queryValues, type FieldErrors } from '../forms';
import { parseInput } from '../../../domain/validation';
const isFinal = (t: TaskDocument) => FINAL_STATES.has(t.state as TaskState);
const TASK_PAGE = 25;
const TASK_STATUSES: Array<[string, string]> = [['all', 'All tasks'], ['open', 'Open (queued or running)'], ['done', 'Finished'], ['succeeded', 'Succeeded'], ['failed', 'Failed'], ['cancelled', 'Cancelled']];
const TaskFilters = z.object({
  status: z.enum(['all', 'open', 'done', 'succeeded', 'failed', 'cancelled']).default('all'),
  key: z.string().max(100).optional(),
  model: z.string().max(200).optional(),
  from: Day.optional(),
  to: Day.optional(),
  before: z.string().regex(/^\d{1,15}\.[\w:-]{1,200}$/).optional(),
});
type TaskFilters = z.infer<typeof TaskFilters>;
const TASK_FIELDS = ['from', 'to'];
const TASK_MESSAGES: Record<string, string> = {
  from: 'Pick a start date, or leave it empty.', to: 'Pick an end date, or leave it empty.', status: 'Pick a status from the list.',
  key: 'Pick a key from the list.', model: 'Pick a model from the list.', before: 'That page link is out of date: start again from the first page.',
};
const statusOf = (t: TaskDocument) => publicStatus(t.kind as TaskKind, t.state as TaskState);

export async function openTasks(svc: ConsoleServices, accountId: string, limit: number): Promise<TaskDocument[]> {
  return svc.deps.db.Task.find({ account_id: accountId, state: { $in: ['queued', 'running'] } }).sort({ created_at: -1 }).limit(limit).lean<TaskDocument[]>();
}

/** The prompt the task was asked with (or its text, lyrics, script), shortened. */
export function promptOf(t: TaskDocument): string {
  const i = t.input ?? {};
  const v = ['prompt', 'text', 'input', 'lyrics', 'script', 'gpt_description_prompt'].map((k) => i[k]).find((x) => typeof x === 'string' && x.trim());
  const text = typeof v === 'string' ? v.trim().replace(/\s+/g, ' ') : '';
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

function resultLive(t: TaskDocument): boolean {
  const r = t.result;
  return !!r && r.urls.length > 0 && !r.links_expired && !(r.expires_at !== null && new Date(r.expires_at).getTime() <= Date.now());
}

/** A small preview of the first result: the image itself, or a word for what the result is. */
export function thumbnail(t: TaskDocument): Html {
  if (!resultLive(t)) return html`<span class="muted">${isFinal(t) ? (t.result?.urls.length ? 'expired' : '—') : '…'}</span>`;
  const u = t.result!.urls[0];
  const kind = mediaOf(t, u);
  return kind === 'image'
    ? html`<a href="/console/tasks/${t._id}"><img class="thumb" src="${u}" alt="Result of ${t._id}" loading="lazy" data-testid="thumb"></a>`
    : html`<a href="/console/tasks/${t._id}">${kind === 'link' ? 'result' : kind}</a>`;
}

export function taskRow(t: TaskDocument, withCost = true): Html {
  const prompt = promptOf(t);
  return html`<tr data-task="${t._id}"><td><a href="/console/tasks/${t._id}"><code>${t._id}</code></a>${prompt ? html`<span class="prompt" title="${prompt}" data-testid="prompt">${prompt}</span>` : ''}</td><td>${t.model}</td>
<td><span class="status status-${t.state}">${statusOf(t)}</span>${t.progress !== null && !isFinal(t) ? html` <small>${t.progress}%</small>` : ''}</td>
<td>${when(t.created_at)}</td>${withCost ? html`<td>${thumbnail(t)}</td><td>${t.kind}</td><td class="num">${cost(isFinal(t) ? t.cost_nano : t.reserved_nano)}</td>` : ''}</tr>`;
}

function mediaOf(t: TaskDocument, url: string): 'image' | 'video' | 'audio' | 'link' {
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
export function preview(t: TaskDocument): Html {
  const r = t.result;
  if (!r || r.urls.length === 0) return html`<p class="muted">${isFinal(t) ? 'No result files.' : 'No result yet.'}</p>`;
  const expired = r.links_expired || (r.expires_at !== null && new Date(r.expires_at).getTime() <= Date.now());
  if (expired) {
    return html`<p class="muted">The result links expired${r.expires_at ? html` on ${when(r.expires_at)}` : ''}:</p>
<ul class="expired-links">${r.urls.map((u) => html`<li><code>${u}</code></li>`)}</ul>`;
  }
  return html`<div class="previews">${r.urls.map((u) => {
    const kind = mediaOf(t, u);
    if (kind === 'image') return html`<figure><a href="${u}" rel="noreferrer"><img src="${u}" alt="Result image of ${t._id}" loading="lazy"></a></figure>`;
    if (kind === 'video') return html`<figure><video src="${u}" controls preload="metadata"></video></figure>`;
    if (kind === 'audio') return html`<figure><audio src="${u}" controls preload="none"></audio></figure>`;
    return html`<p><a href="${u}" rel="noreferrer">${u}</a></p>`;
  })}</div>${r.expires_at ? html`<p class="hint">Links work until ${when(r.expires_at)}.</p>` : ''}`;
}

function detail(ctx: CCtx, svc: ConsoleServices, t: TaskDocument): Html {
  const operator = ctx.state.session?.principal.kind === 'operator';
  const ui = svc.deps.config.TEMPORAL_UI_URL;
  const live = !isFinal(t);
  return html`<section id="task-detail" class="card"${live ? html` hx-get="/console/tasks/${t._id}?fragment=1" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}>
<dl class="facts">
  <dt>Status</dt><dd><span class="status status-${t.state}" data-testid="task-status">${statusOf(t)}</span>${t.progress !== null && live ? html` (${t.progress}%)` : ''}</dd>
  <dt>Model</dt><dd>${t.model}</dd>
  <dt>Family</dt><dd>${t.kind} (${t.endpoint})</dd>
  <dt>Key</dt><dd>${t.key_name}</dd>
  ${promptOf(t) ? html`<dt>Prompt</dt><dd data-testid="task-prompt">${promptOf(t)}</dd>` : ''}
  <dt>Submitted</dt><dd>${when(t.created_at, { seconds: true })}</dd>
  <dt>Completed</dt><dd>${when(t.completed_at, { seconds: true, empty: '—' })}</dd>
  <dt>Cost</dt><dd>${cost(isFinal(t) ? t.cost_nano : t.reserved_nano)}${live ? ' (reserved)' : ''}</dd>
  <dt>Request id</dt><dd><a href="/console/lookup?id=${t.request_id}"><code>${t.request_id}</code></a></dd>
  ${t.error_code ? html`<dt>Error</dt><dd>${t.error_message ?? ''} <small class="muted">(${t.error_code})</small></dd>` : ''}
  ${operator && ui ? html`<dt>Workflow</dt><dd><a href="${ui.replace(/\/$/, '')}/namespaces/${encodeURIComponent(svc.deps.config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(t._id)}" rel="noreferrer" target="_blank">Open in the Temporal UI</a></dd>` : ''}
</dl>
<h2>Result</h2>
${preview(t)}
</section>`;
}

export function taskRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const list = async (ctx: CCtx) => {
    const accountId = currentAccount(ctx);
    let errors: FieldErrors | undefined;
    let f: TaskFilters = { status: 'all' };
    const filter: Record<string, unknown> = { account_id: accountId };
    try {
      f = parseInput('query', TaskFilters, queryValues(ctx));
      const { from, to } = dayRange(f.from, f.to);
      if (from || to) filter.created_at = { ...(from && { $gte: from }), ...(to && { $lt: to }) };
    } catch (err) {
      errors = fieldErrors(err, TASK_FIELDS, TASK_MESSAGES);
    }
    if (f.status === 'open') filter.state = { $in: ['queued', 'running'] };
    else if (f.status === 'done') filter.state = { $in: [...FINAL_STATES] };
    else if (f.status !== 'all') filter.state = f.status;
    if (f.key) filter.key_id = f.key;
    if (f.model) filter.model = f.model;
    const c = f.before ? parseCursor(f.before) : null;
    if (c) filter.$or = [{ created_at: { $lt: c.at } }, { created_at: c.at, _id: { $lt: c.id } }];
    const tasks = errors ? [] : await svc.deps.db.Task.find(filter).sort({ created_at: -1, _id: -1 }).limit(TASK_PAGE + 1).lean<TaskDocument[]>();
    const more = tasks.length > TASK_PAGE;
    if (more) tasks.length = TASK_PAGE;
    const last = tasks[tasks.length - 1];
    const next = more && last ? cursorOf(last.created_at, last._id) : null;
    const qs = new URLSearchParams(Object.entries(f).filter(([k, v]) => v && k !== 'before' && !(k === 'status' && v === 'all')) as [string, string][]).toString();
    return { tasks, f, qs, next, errors, live: tasks.some((t) => !isFinal(t)) };
  };
  const rows = (tasks: TaskDocument[], live: boolean, qs: string, filtered: boolean) =>
    html`<tbody id="task-rows"${live ? html` hx-get="/console/tasks/rows?${qs}" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}>${
      tasks.length ? tasks.map((t) => taskRow(t)) : html`<tr><td colspan="7" class="muted">${filtered ? 'No task matches these filters.' : 'No tasks yet. Image, video, music and speech requests run as tasks; each appears here with its prompt, progress and result.'}</td></tr>`}</tbody>`;

  router.get('/console/tasks', signedIn, async (ctx) => {
    const { tasks, f, qs, next, errors, live } = await list(ctx);
    const accountId = currentAccount(ctx);
    if (errors) ctx.status = 400;
    const keys = await svc.deps.keys.listByAccount(accountId);
    const models = svc.deps.catalogue().models.filter((m) => m.endpoint_type !== 'chat' && m.endpoint_type !== 'embedding').map((m) => m.id);
    const opt = (v: string, label: string, cur?: string) => html`<option value="${v}"${v === (cur ?? '') ? html` selected` : ''}>${label}</option>`;
    const filtered = !!qs;
    const base = new URLSearchParams(qs);
    const olderQs = next ? new URLSearchParams([...base, ['before', next]]).toString() : '';
    ctx.type = 'html';
    ctx.body = page(ctx, 'Tasks', html`
<form method="get" action="/console/tasks" class="card filters" novalidate>
${formError(errors)}
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status">${TASK_STATUSES.map(([v, l]) => opt(v, l, f.status))}</select></div>
<div class="field"><label for="f-key">Key</label><select id="f-key" name="key">${opt('', 'All keys', f.key)}${keys.map((k) => opt(k._id, `${k.name} (…${svc.deps.keys.tailOf(k) ?? k.prefix})`, f.key))}</select></div>
<div class="field"><label for="f-model">Model</label><select id="f-model" name="model">${opt('', 'All models', f.model)}${models.map((m) => opt(m, m, f.model))}</select></div>
<div class="field${errors?.from ? ' has-error' : ''}"><label for="f-from">From (UTC day)</label><input id="f-from" type="date" name="from" value="${f.from ?? ''}">${errorFor(errors, 'from')}</div>
<div class="field${errors?.to ? ' has-error' : ''}"><label for="f-to">To (UTC day)</label><input id="f-to" type="date" name="to" value="${f.to ?? ''}">${errorFor(errors, 'to')}</div>
<div class="field buttons"><button type="submit" class="primary">Filter</button>${filtered ? html` <a class="button" href="/console/tasks">Clear</a>` : ''}</div>
</form>
<div class="table-wrap"><table class="tasks"><thead><tr><th>Task and prompt</th><th>Model</th><th>Status</th><th>Submitted</th><th>Result</th><th>Family</th><th class="num">Cost</th></tr></thead>
${rows(tasks, live, qs, filtered)}</table></div>
${f.before || next ? html`<nav class="pager" aria-label="Pages" data-testid="pager"><span class="hint">${tasks.length} tasks on this page, newest first.</span><span>${f.before ? html`<a class="button" href="/console/tasks${qs ? `?${qs}` : ''}">Newest</a> ` : ''}${next ? html`<a class="button" rel="next" href="/console/tasks?${olderQs}" data-testid="older">Older tasks →</a>` : ''}</span></nav>` : ''}`);
  });
  router.get('/console/tasks/rows', signedIn, async (ctx) => {
    const { tasks, qs, live } = await list(ctx);
    ctx.type = 'html';
    ctx.body = rows(tasks, live, qs, !!qs).value;
  });
  router.get('/console/tasks/:id', signedIn, async (ctx) => {
    const t = await svc.deps.db.Task.findById(ctx.params.id).lean<TaskDocument>();
    if (!t) throw notFoundTask(ctx.params.id);
    await assertManages(svc, ctx, t.account_id, `task ${ctx.params.id}`);
    ctx.type = 'html';
    ctx.body = ctx.query.fragment ? detail(ctx, svc, t).value : page(ctx, `Task ${t._id}`, detail(ctx, svc, t));
  });
}

import { GatewayError } from '../../../domain/errors';
const notFoundTask = (id: string) => new GatewayError('not_found', `no task ${id}`, { status: 404 });
