import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html, type Html } from '../html';
import { page } from '../layout';
import { csrfInput, errorFor, field, fieldErrors, formError, one, type FieldErrors } from '../forms';
import { GatewayError } from '../../../domain/errors';
import { canAdminister, type Role } from '../../../domain/people';
import { cost, limitUsd } from '../money';
import { when } from '../time';
import { agentName } from '../audit-view';
import { deleteAgent } from '../../../capabilities/agents/agent-removal';
import { parseInput } from '../../../domain/validation';
import type { AgentRecord } from '../../../domain/agents';
import type { AgentKeyDoc } from '../../../capabilities/agents/store';
import type { ApiKeyDoc } from '../../../capabilities/accounts/store';
import type { Actor, Origin } from '../../../capabilities/agents/actor';
import { Approve, KeyIssue, KeyRequest, NewAgent } from '../../routes/admin-agents';
import type { ConsoleServices } from '../services';
import { baseName } from './knowledge';

const AGENT_MESSAGES = {
  name: 'Give the agent a name (1 to 200 characters, no control characters).',
  system_prompt: 'The persona is too long: keep it under 100,000 characters.',
  temperature: 'Enter a temperature between 0 and 2, like 0.7, or leave it empty.',
};
const agentPath = (id: string) => `/console/agents/${encodeURIComponent(id)}`;

/** What another enterprise's agent or key looks like from outside: nothing (404), never "forbidden". */
async function hidden<T>(p: Promise<T>, what: string): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof GatewayError && err.status === 403) throw new GatewayError('not_found', `no ${what}`, { status: 404 });
    throw err;
  }
}

const AUDIT_WORDS: Record<string, string> = {
  request: 'Requested', issue: 'Issued', approve: 'Approved', reject: 'Rejected', revoke: 'Revoked', delete: 'Deleted', view_plaintext: 'Viewed the key',
};

const actorOf = (ctx: CCtx): Actor => ctx.state.session!.principal;
const originOf = (ctx: CCtx): Origin => ({ ip: ctx.ip || null, userAgent: ctx.get('user-agent') || null });

interface Enterprise { id: string; name: string; role: Role }

/** The enterprises the principal belongs to (any role); the operator sees every enterprise account. */
async function enterprisesOf(svc: ConsoleServices, ctx: CCtx): Promise<Enterprise[]> {
  const p = ctx.state.session!.principal;
  if (p.kind === 'operator') return (ctx.state.managed ?? []).filter((a) => a.enterprise).map((a) => ({ id: a.id, name: a.name, role: 'owner' as Role }));
  const out: Enterprise[] = [];
  for (const m of await svc.deps.people.membershipsOf(p.userId)) {
    const acct = await svc.deps.accounts.get(m.enterprise_id).catch(() => null);
    if (acct) out.push({ id: acct._id, name: acct.name, role: m.role });
  }
  return out;
}

function keyState(k: AgentKeyDoc): Html {
  return html`<span class="status status-${k.state === 'issued' ? 'active' : k.state === 'requested' ? 'queued' : 'disabled'}">${k.state}</span>`;
}

type Form = Record<string, string | string[]>;

interface ListOptions {
  ent?: string;
  form?: { f: Form; errors: FieldErrors };
  requestErrors?: Record<string, FieldErrors>;
  approveErrors?: Record<string, FieldErrors>;
  /** What was typed into a refused approval's cap field, so the form shows it back next to its error. */
  approveTyped?: Record<string, string>;
  shown?: { id: string; plaintext: string };
}

const csrfOf = (ctx: CCtx) => ctx.state.session!.csrf;

/** The distinguishing tail of each issued agent key (from its API key). */
async function tailsOf(svc: ConsoleServices, list: AgentKeyDoc[]): Promise<Map<string, string>> {
  const ids = list.map((k) => k.api_key_id).filter((x): x is string => !!x);
  const docs = ids.length ? await svc.deps.db.ApiKey.find({ _id: { $in: ids } }).lean<ApiKeyDoc[]>() : [];
  const byId = new Map(docs.map((d) => [d._id, svc.deps.keys.tailOf(d) ?? '']));
  return new Map(list.map((k) => [k._id, k.api_key_id ? byId.get(k.api_key_id) ?? '' : '']));
}

const keyCode = (k: AgentKeyDoc, tails: Map<string, string>) => (k.prefix ? html` <code class="key-id" data-testid="key-tail">${k.prefix}…${tails.get(k._id) ?? ''}</code>` : '');
const chatModels = (svc: ConsoleServices) => svc.deps.catalogue().models.filter((m) => m.endpoint_type === 'chat' && !m.retired && m.callable).map((m) => m.id);

/** The enterprise the page acts on (asked for, the header's, or the first), with the principal's list. */
async function currentEnterprise(svc: ConsoleServices, ctx: CCtx, wanted?: string): Promise<{ list: Enterprise[]; ent: Enterprise | null }> {
  const list = await enterprisesOf(svc, ctx);
  const id = wanted ?? (typeof ctx.query.enterprise === 'string' ? ctx.query.enterprise : ctx.state.current?.enterprise ? ctx.state.current.id : undefined);
  const ent = (id ? list.find((e) => e.id === id) : list[0]) ?? null;
  if (id && !ent) throw new GatewayError('not_found', `no enterprise ${id}`, { status: 404 });
  return { list, ent };
}

function createForm(svc: ConsoleServices, ctx: CCtx, ent: Enterprise, f: Form = {}, errors?: FieldErrors): Html {
  return html`
<form method="post" action="/console/agents" class="card" id="new-agent" novalidate>${csrfInput(csrfOf(ctx))}<input type="hidden" name="enterprise_id" value="${ent.id}">
<h2>New agent</h2>${formError(errors)}
${field({ name: 'name', label: 'Name', value: one(f.name), required: true, errors })}
<div class="field${errors?.system_prompt ? ' has-error' : ''}"><label for="f-system_prompt">Persona (system prompt)</label>
<textarea id="f-system_prompt" name="system_prompt" rows="4">${one(f.system_prompt)}</textarea>${errorFor(errors, 'system_prompt')}</div>
<div class="field${errors?.model_id ? ' has-error' : ''}"><label for="f-model_id">Model</label><select id="f-model_id" name="model_id">
<option value="">The enterprise default</option>${chatModels(svc).map((m) => html`<option value="${m}"${one(f.model_id) === m ? html` selected` : ''}>${m}</option>`)}</select>${errorFor(errors, 'model_id')}</div>
${field({ name: 'temperature', label: 'Temperature (optional)', value: one(f.temperature), errors, attrs: html`inputmode="decimal"` })}
<div class="field"><label class="inline"><input type="checkbox" name="web_search" value="1"${one(f.web_search) ? html` checked` : ''}> Web search</label>
<label class="inline"><input type="checkbox" name="drawing" value="1"${one(f.drawing) ? html` checked` : ''}> Drawing</label>
<label class="inline"><input type="checkbox" name="published" value="1"${one(f.published) ? html` checked` : ''}> Publish now</label></div>
<button type="submit" class="primary">Create agent</button></form>`;
}

/** What the agents list shows an enterprise's member (admins see requests and the audit too). */
async function listData(svc: ConsoleServices, ctx: CCtx, ent: Enterprise) {
  const { service, keys, audit } = svc.deps.agents;
  const admin = canAdminister(ent.role);
  const actor = actorOf(ctx);
  const p = ctx.state.session!.principal;
  const [agents, mine, pending, auditRows] = await Promise.all([
    service.list(actor, ent.id),
    p.kind === 'user' ? keys.listForUser(actor, p.userId) : Promise.resolve([] as AgentKeyDoc[]),
    admin ? keys.listForEnterprise(actor, ent.id, { state: 'requested' }) : Promise.resolve([] as AgentKeyDoc[]),
    admin ? audit.list(ent.id, { limit: 30 }) : Promise.resolve({ rows: [], nextCursor: null }),
  ]);
  const names = new Map(agents.map((a) => [a.id, a.name]));
  const keyNames = new Map<string, string>([...mine, ...pending].map((k) => [k._id, k.name]));
  if (admin) for (const k of await keys.listForEnterprise(actor, ent.id)) keyNames.set(k._id, k.name);
  const tails = await tailsOf(svc, [...mine]);
  const who = await svc.deps.people.labelsOf([...pending.map((k) => k.requested_by), ...auditRows.rows.map((r) => (r.actor.kind === 'operator' ? null : r.actor.user_id))]);
  return { admin, p, agents, mine, pending, auditRows, names, keyNames, tails, who, csrf: csrfOf(ctx) };
}

type ListData = Awaited<ReturnType<typeof listData>>;

function agentTable({ agents, admin, p, csrf }: ListData, opts: ListOptions): Html {
  return html`<div class="table-wrap"><table><thead><tr><th>Agent</th><th>Model</th><th>State</th><th>Bases</th><th></th></tr></thead>
<tbody>${agents.length === 0 ? html`<tr><td colspan="5" class="muted">No agents${admin ? '' : ' published'} yet.</td></tr>` : agents.map((a) => html`<tr data-agent="${a.id}">
<td>${admin ? html`<a href="${agentPath(a.id)}">${a.name}</a>` : a.name}</td><td>${a.model_id ?? 'default'}</td><td>${a.published ? 'published' : 'draft'}</td><td>${a.knowledge_bases.map((b) => b.kb_id).join(', ') || '—'}</td>
<td>${a.published && p.kind === 'user' ? html`<form method="post" action="${agentPath(a.id)}/key-requests" class="inline-form">${csrfInput(csrf)}
<label class="sr-only" for="req-${a.id}">Key name</label><input id="req-${a.id}" name="name" placeholder="key name" value="">
<button type="submit">Request a key</button>${errorFor(opts.requestErrors?.[a.id], 'name')}${formError(opts.requestErrors?.[a.id])}</form>` : ''}</td></tr>`)}</tbody></table></div>`;
}

function pendingSection({ pending, names, who, csrf }: ListData, opts: ListOptions): Html {
  return html`<section class="card" data-testid="pending"><h2>Key requests awaiting approval</h2>
${pending.length === 0 ? html`<p class="muted">None.</p>` : html`<div class="table-wrap"><table><thead><tr><th>Key</th><th>Agent</th><th>Requested by</th><th>Note</th><th></th></tr></thead><tbody>
${pending.map((k) => html`<tr data-request="${k._id}"><td>${k.name}</td><td>${names.get(k.agent_id) ?? k.agent_id}</td><td>${k.requested_by ? who.get(k.requested_by) : ''}</td><td>${k.note ?? ''}</td>
<td><form method="post" action="/console/agent-keys/${k._id}/approve" class="inline-form" novalidate>${csrfInput(csrf)}
<label for="cap-${k._id}">Spend cap</label><input id="cap-${k._id}" name="spend_cap_usd" inputmode="decimal" placeholder="e.g. 20" value="${opts.approveTyped?.[k._id] ?? ''}"${opts.approveErrors?.[k._id]?.spend_cap_usd ? html` aria-invalid="true"` : ''}>
<button type="submit" class="primary">Approve</button>${errorFor(opts.approveErrors?.[k._id], 'spend_cap_usd')}${formError(opts.approveErrors?.[k._id])}</form>
<form method="post" action="/console/agent-keys/${k._id}/reject" class="inline-form">${csrfInput(csrf)}<button type="submit">Reject</button></form></td></tr>`)}</tbody></table></div>`}</section>`;
}

function myKeysSection({ mine, names, tails, csrf }: ListData): Html {
  return html`<section class="card"><h2>Your agent keys</h2>
${mine.length === 0 ? html`<p class="muted">None yet.</p>` : html`<div class="table-wrap"><table><thead><tr><th>Key</th><th>Agent</th><th>State</th><th class="num">Cap</th><th></th></tr></thead><tbody>
${mine.map((k) => html`<tr data-key="${k._id}"><td>${k.name}${keyCode(k, tails)}</td><td>${names.get(k.agent_id) ?? k.agent_id}</td><td>${keyState(k)}</td>
<td class="num">${k.spend_cap_nano === null ? '—' : limitUsd(k.spend_cap_nano)}</td>
<td>${k.state === 'issued' ? html`<form method="post" action="/console/agent-keys/${k._id}/view" class="inline-form">${csrfInput(csrf)}<button type="submit">View key</button></form>` : ''}</td></tr>`)}</tbody></table></div>`}</section>`;
}

function auditSection({ auditRows, keyNames, who }: ListData): Html {
  return html`<section class="card"><h2>Audit record</h2>${auditRows.rows.length === 0 ? html`<p class="muted">Nothing yet.</p>` : html`<ul class="audit" data-testid="agent-audit">
${auditRows.rows.map((r) => html`<li data-action="${r.action}">${when(r.created_at)} · <strong>${AUDIT_WORDS[r.action] ?? r.action}</strong> · key ${keyNames.get(r.agent_key_id ?? '') ?? html`<code>${r.agent_key_id ?? ''}</code>`} by <span class="actor">${r.actor.kind === 'operator' ? 'the operator' : r.actor.user_id ? who.get(r.actor.user_id) : 'the system'}</span> · from <span title="${r.user_agent ?? ''}">${r.ip ?? 'an unknown address'}${r.user_agent ? ` (${agentName(r.user_agent)})` : ''}</span></li>`)}</ul>`}</section>`;
}

async function listPage(svc: ConsoleServices, ctx: CCtx, opts: ListOptions = {}) {
  const { list, ent } = await currentEnterprise(svc, ctx, opts.ent);
  if (!ent) {
    return page(ctx, 'Agents', html`<section class="card empty"><p>Agents belong to enterprise accounts, and you are not a member of any. When an owner adds you to an enterprise, its published agents appear here and you can request a key for them.</p></section>`, { actingOn: 'No enterprise to act on' });
  }
  const data = await listData(svc, ctx, ent);
  const { admin, p } = data;
  const actingOn = html`Acting on <strong>${ent.name}</strong> (enterprise, you are ${ent.role})${ctx.state.current && ctx.state.current.id !== ent.id ? html` · agents belong to an enterprise, whichever account the header shows` : ''}`;
  return page(ctx, 'Agents', html`
${list.length > 1 ? html`<form method="get" class="filters"><label for="f-enterprise">Enterprise</label><select id="f-enterprise" name="enterprise" data-autosubmit>
${list.map((e) => html`<option value="${e.id}"${e.id === ent.id ? html` selected` : ''}>${e.name} (${e.role})</option>`)}</select><button type="submit" class="js-hide">Show</button></form>` : ''}
${typeof ctx.query.deleted === 'string' ? html`<p class="notice ok" role="status" data-testid="notice">Agent “${ctx.query.deleted}” deleted; ${ctx.query.revoked ?? '0'} issued key(s) revoked. Its audit record is kept below.</p>` : ''}
${opts.shown ? html`<section class="card reveal" role="status"><p>The key (this view was recorded in the audit record):</p><p><code class="secret" data-testid="agent-plaintext">${opts.shown.plaintext}</code></p></section>` : ''}
${agentTable(data, opts)}
${admin ? createForm(svc, ctx, ent, opts.form?.f, opts.form?.errors) : ''}
${admin ? pendingSection(data, opts) : ''}
${p.kind === 'user' ? myKeysSection(data) : ''}
${admin ? auditSection(data) : ''}`, { actingOn });
}

async function detailPage(svc: ConsoleServices, ctx: CCtx, agent: AgentRecord, opts: { issueErrors?: FieldErrors; issued?: string; baseErrors?: FieldErrors } = {}) {
  const { service, keys } = svc.deps.agents;
  const actor = actorOf(ctx);
  const [agentKeys, usage, bases, members] = await Promise.all([
    keys.listForEnterprise(actor, agent.enterprise_id, { agentId: agent.id }),
    service.usage(actor, agent.id, 30, svc.deps.agents.usage),
    svc.deps.kbBases.list(agent.enterprise_id),
    svc.deps.people.membersOf(agent.enterprise_id),
  ]);
  const who = await svc.deps.people.labelsOf([...agentKeys.map((k) => k.holder_user_id), ...members.map((m) => m.user_id)]);
  const tails = await tailsOf(svc, agentKeys);
  const csrf = csrfOf(ctx);
  const attached = new Set(agent.knowledge_bases.map((b) => b.kb_id));
  const attachable = bases.filter((b) => !attached.has(b.kb_id));
  // An attached base by the name the knowledge page gives it (`baseName`); a base since deleted by its id alone.
  const byId = new Map(bases.map((b) => [b.kb_id, b]));
  const attachedName = (kbId: string) => {
    const b = byId.get(kbId);
    return b ? baseName(b, true) : '';
  };
  const entName = (await svc.deps.accounts.get(agent.enterprise_id).catch(() => null))?.name ?? agent.enterprise_id;
  return page(ctx, `Agent ${agent.name}`, html`
${opts.issued ? html`<section class="card reveal" role="status"><p>The new key (shown now; later viewable by its holder):</p><p><code class="secret" data-testid="agent-plaintext">${opts.issued}</code></p></section>` : ''}
<section class="card"><dl class="facts">
<dt>State</dt><dd data-testid="agent-state">${agent.published ? 'published' : 'draft'}</dd><dt>Model</dt><dd>${agent.model_id ?? 'the enterprise default'}</dd>
<dt>Persona</dt><dd><pre class="page-body">${agent.system_prompt}</pre></dd>
<dt>Switches</dt><dd>web search ${agent.web_search ? 'on' : 'off'}, drawing ${agent.drawing ? 'on' : 'off'}${agent.temperature !== null ? `, temperature ${agent.temperature}` : ''}</dd></dl>
<div class="actions"><form method="post" action="${agentPath(agent.id)}/${agent.published ? 'unpublish' : 'publish'}">${csrfInput(csrf)}<button type="submit">${agent.published ? 'Unpublish' : 'Publish'}</button></form>
<form method="post" action="${agentPath(agent.id)}/delete" data-confirm="Delete this agent for good? Its ${agentKeys.filter((k) => k.state === 'issued').length} issued keys are revoked at once; the audit record is kept.">${csrfInput(csrf)}<button type="submit" class="danger">Delete agent</button></form></div></section>
<section class="card"><h2>Knowledge bases</h2>
${agent.knowledge_bases.length === 0 ? html`<p class="muted">None attached.</p>` : html`<ul data-testid="agent-bases">${agent.knowledge_bases.map((b) => html`<li>${attachedName(b.kb_id)} <code>${b.kb_id}</code>
<form method="post" action="${agentPath(agent.id)}/bases/${encodeURIComponent(b.kb_id)}/detach" class="inline-form">${csrfInput(csrf)}<button type="submit" class="link">detach</button></form></li>`)}</ul>`}
${attachable.length === 0 ? html`<p class="muted" data-testid="agent-bases-none-left">Every base of this enterprise is attached.</p>${formError(opts.baseErrors)}` : html`<form method="post" action="${agentPath(agent.id)}/bases" class="inline-form">${csrfInput(csrf)}${formError(opts.baseErrors)}
<label for="f-kb">Attach</label><select id="f-kb" name="kb_id">${attachable.map((b) => html`<option value="${b.kb_id}">${baseName(b, true)} (${b.kb_id})</option>`)}</select>
<button type="submit">Attach</button></form>`}</section>
<section class="card"><h2>Usage, last 30 days</h2>
<p data-testid="agent-usage">${usage.totals.requests} requests · ${usage.totals.input_tokens} in / ${usage.totals.output_tokens} out tokens · ${cost(usage.totals.cost_nano)}</p>
${usage.days.length === 0 ? '' : html`<div class="table-wrap"><table data-testid="agent-usage-days"><thead><tr><th>Day (UTC)</th><th class="num">Requests</th><th class="num">Input tokens</th><th class="num">Output tokens</th><th class="num">Cost</th></tr></thead><tbody>
${[...usage.days].reverse().map((d) => html`<tr><td>${d.date}</td><td class="num">${d.requests}</td><td class="num">${d.input_tokens}</td><td class="num">${d.output_tokens}</td><td class="num">${cost(d.cost_nano)}</td></tr>`)}</tbody></table></div>`}</section>
<section class="card"><h2>Keys</h2>
<div class="table-wrap"><table><thead><tr><th>Key</th><th>Holder</th><th>State</th><th class="num">Cap</th><th></th></tr></thead><tbody>
${agentKeys.length === 0 ? html`<tr><td colspan="5" class="muted">No keys.</td></tr>` : agentKeys.map((k) => html`<tr data-key="${k._id}"><td>${k.name}${keyCode(k, tails)}</td><td>${k.holder_user_id ? who.get(k.holder_user_id) : html`<span class="muted">admins</span>`}</td><td>${keyState(k)}</td>
<td class="num">${k.spend_cap_nano === null ? '—' : limitUsd(k.spend_cap_nano)}</td>
<td>${k.state === 'issued' ? html`<form method="post" action="/console/agent-keys/${k._id}/revoke" data-confirm="Revoke this key? It cannot be restored.">${csrfInput(csrf)}<button type="submit" class="danger">Revoke</button></form>` : ''}</td></tr>`)}</tbody></table></div>
<form method="post" action="${agentPath(agent.id)}/keys" class="card" novalidate>${csrfInput(csrf)}<h2>Issue a key directly</h2>${formError(opts.issueErrors)}
${field({ name: 'name', label: 'Name', required: true, errors: opts.issueErrors })}
<div class="field"><label for="f-holder">Holder</label><select id="f-holder" name="holder_user_id"><option value="">nobody (kept by admins)</option>${members.map((m) => html`<option value="${m.user_id}">${who.get(m.user_id)} (${m.role})</option>`)}</select>${errorFor(opts.issueErrors, 'holder_user_id')}</div>
${field({ name: 'spend_cap_usd', label: 'Spend cap (optional)', errors: opts.issueErrors, attrs: html`inputmode="decimal"` })}
<button type="submit" class="primary">Issue key</button></form></section>
<p><a href="/console/agents?enterprise=${agent.enterprise_id}">All agents</a></p>`, { actingOn: html`Acting on <strong>${entName}</strong> (enterprise)` });
}

export function agentRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  listRoutes(router, svc, signedIn);
  keyRoutes(router, svc, signedIn);
  detailRoutes(router, svc, signedIn);
}

/**
 * An agent key's plaintext for the page a POST redirected to (its view or issue already recorded), once: the mark
 * the POST left in this session is taken; a reload, or another session, gets nothing.
 */
async function shownOnce(svc: ConsoleServices, ctx: CCtx, id: unknown): Promise<{ id: string; plaintext: string } | undefined> {
  if (typeof id !== 'string' || !(await svc.sessions.takeOnce(ctx.state.sessionToken, `agent-key:${id}`))) return undefined;
  return { id, plaintext: await hidden(svc.deps.agents.keys.plaintextOfRecordedView(actorOf(ctx), id), `agent key ${id}`) };
}

/** The list: creating an agent, requesting a key. */
function listRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const { service, keys } = svc.deps.agents;
  router.get('/console/agents', signedIn, async (ctx) => {
    ctx.type = 'html';
    ctx.body = await listPage(svc, ctx, { shown: await shownOnce(svc, ctx, ctx.query.shown) });
  });

  router.post('/console/agents', signedIn, async (ctx) => {
    const f = ctx.state.form ?? {};
    const { ent } = await currentEnterprise(svc, ctx, one(f.enterprise_id));
    if (!ent) throw new GatewayError('not_found', 'no enterprise', { status: 404 });
    try {
      const body: Record<string, unknown> = { name: one(f.name), system_prompt: one(f.system_prompt), web_search: !!one(f.web_search), drawing: !!one(f.drawing), published: !!one(f.published) };
      if (one(f.model_id)) body.model_id = one(f.model_id);
      if (one(f.temperature)) body.temperature = Number(one(f.temperature));
      const agent = await hidden(service.create(actorOf(ctx), ent.id, parseInput('body', NewAgent, body)), `enterprise ${ent.id}`);
      ctx.redirect(agentPath(agent.id));
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await listPage(svc, ctx, { ent: ent.id, form: { f, errors: fieldErrors(err, ['name', 'system_prompt', 'model_id', 'temperature'], AGENT_MESSAGES) } });
    }
  });

  router.post('/console/agents/:id/key-requests', signedIn, async (ctx) => {
    const agent = await hidden(service.get(actorOf(ctx), ctx.params.id), `agent ${ctx.params.id}`);
    try {
      await keys.request(actorOf(ctx), agent.id, parseInput('body', KeyRequest, { name: one(ctx.state.form?.name) }), originOf(ctx));
      ctx.redirect(`/console/agents?enterprise=${agent.enterprise_id}`);
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await listPage(svc, ctx, { ent: agent.enterprise_id, requestErrors: { [agent.id]: fieldErrors(err, ['name'], { name: 'Give the key a name (1 to 200 characters, no control characters) before requesting it.' }) } });
    }
  });
}

/** An agent key's decisions (approve, reject, revoke) and its holder's view of it. */
function keyRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const { keys } = svc.deps.agents;
  const loadKey = (ctx: CCtx) => hidden(keys.get(actorOf(ctx), ctx.params.id), `agent key ${ctx.params.id}`);

  router.post('/console/agent-keys/:id/approve', signedIn, async (ctx) => {
    const k = await loadKey(ctx);
    try {
      const { spend_cap_usd } = parseInput('body', Approve, { spend_cap_usd: one(ctx.state.form?.spend_cap_usd) || undefined });
      await hidden(keys.approve(actorOf(ctx), k._id, { spend_cap_nano: spend_cap_usd }, originOf(ctx)), `agent key ${k._id}`);
      ctx.redirect(`/console/agents?enterprise=${k.enterprise_id}`);
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await listPage(svc, ctx, { ent: k.enterprise_id, approveTyped: { [k._id]: one(ctx.state.form?.spend_cap_usd) }, approveErrors: { [k._id]: fieldErrors(err, ['spend_cap_usd'], { spend_cap_usd: 'Enter the spend cap for this key in USD, like 20 or 20.50: an approved key always has one.' }) } });
    }
  });

  router.post('/console/agent-keys/:id/reject', signedIn, async (ctx) => {
    const k = await loadKey(ctx);
    await hidden(keys.reject(actorOf(ctx), k._id, {}, originOf(ctx)), `agent key ${k._id}`);
    ctx.redirect(`/console/agents?enterprise=${k.enterprise_id}`);
  });

  router.post('/console/agent-keys/:id/revoke', signedIn, async (ctx) => {
    const k = await loadKey(ctx);
    await hidden(keys.revoke(actorOf(ctx), k._id, originOf(ctx)), `agent key ${k._id}`);
    ctx.redirect(agentPath(k.agent_id));
  });

  router.post('/console/agent-keys/:id/view', signedIn, async (ctx) => {
    const k = await loadKey(ctx);
    await hidden(keys.viewPlaintext(actorOf(ctx), k._id, originOf(ctx)), `agent key ${k._id}`);
    // POST, redirect, GET: the plaintext shows once; a reload neither shows it again nor records another view.
    await svc.sessions.markOnce(ctx.state.sessionToken!, `agent-key:${k._id}`);
    ctx.redirect(`/console/agents?enterprise=${encodeURIComponent(k.enterprise_id)}&shown=${encodeURIComponent(k._id)}`);
    ctx.status = 303;
  });
}

/** An agent's own page: publishing, deletion, bases and directly issued keys (admins only). */
function detailRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const { service, keys } = svc.deps.agents;
  const loadAgent = (ctx: CCtx) => hidden(service.get(actorOf(ctx), ctx.params.id), `agent ${ctx.params.id}`);
  /** Admin pages of an agent: a member (who may see a published agent) gets 404 here too. */
  const loadManaged = async (ctx: CCtx) => {
    const agent = await loadAgent(ctx);
    await hidden(svc.deps.agents.permissions.requireAdmin(actorOf(ctx), agent.enterprise_id), `agent ${ctx.params.id}`);
    return agent;
  };

  router.get('/console/agents/:id', signedIn, async (ctx) => {
    const agent = await loadManaged(ctx);
    const shown = await shownOnce(svc, ctx, ctx.query.issued);
    ctx.type = 'html';
    ctx.body = await detailPage(svc, ctx, agent, { issued: shown?.plaintext });
  });
  for (const [action, published] of [['publish', true], ['unpublish', false]] as const) {
    router.post(`/console/agents/:id/${action}`, signedIn, async (ctx) => {
      const agent = await loadManaged(ctx);
      await service.setPublished(actorOf(ctx), agent.id, published);
      ctx.redirect(agentPath(agent.id));
    });
  }
  router.post('/console/agents/:id/delete', signedIn, async (ctx) => {
    const agent = await loadManaged(ctx);
    const { revoked } = await deleteAgent(svc.deps.agents, actorOf(ctx), agent.id, originOf(ctx));
    ctx.redirect(`/console/agents?enterprise=${agent.enterprise_id}&deleted=${encodeURIComponent(agent.name)}&revoked=${revoked}`);
  });
  router.post('/console/agents/:id/bases', signedIn, async (ctx) => {
    const agent = await loadManaged(ctx);
    try {
      await service.attachBase(actorOf(ctx), agent.id, one(ctx.state.form?.kb_id));
      ctx.redirect(agentPath(agent.id));
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await detailPage(svc, ctx, agent, { baseErrors: fieldErrors(err, []) });
    }
  });
  router.post('/console/agents/:id/bases/:kb/detach', signedIn, async (ctx) => {
    const agent = await loadManaged(ctx);
    await service.detachBase(actorOf(ctx), agent.id, ctx.params.kb);
    ctx.redirect(agentPath(agent.id));
  });
  router.post('/console/agents/:id/keys', signedIn, async (ctx) => {
    const agent = await loadManaged(ctx);
    const f = ctx.state.form ?? {};
    try {
      const body: Record<string, unknown> = { name: one(f.name) };
      if (one(f.holder_user_id)) body.holder_user_id = one(f.holder_user_id);
      if (one(f.spend_cap_usd)) body.spend_cap_usd = one(f.spend_cap_usd);
      const input = parseInput('body', KeyIssue, body);
      const { doc } = await keys.issue(actorOf(ctx), agent.id, { name: input.name, holder_user_id: input.holder_user_id, spend_cap_nano: input.spend_cap_usd, expires_at: null }, originOf(ctx));
      // POST, redirect, GET: a reload of the page that shows the new key does not issue another.
      await svc.sessions.markOnce(ctx.state.sessionToken!, `agent-key:${doc._id}`);
      ctx.redirect(`${agentPath(agent.id)}?issued=${encodeURIComponent(doc._id)}`);
      ctx.status = 303;
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await detailPage(svc, ctx, agent, { issueErrors: fieldErrors(err, ['name', 'holder_user_id', 'spend_cap_usd'], { name: 'Give the key a name (1 to 200 characters, no control characters).', spend_cap_usd: 'Enter the spend cap in USD, like 20 or 20.50, or leave it empty for no cap.', holder_user_id: 'Pick a member of this enterprise, or nobody.' }) });
    }
  });
}
