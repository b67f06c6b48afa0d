import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html, type Html } from '../html';
import { page } from '../layout';
import { csrfInput, errorFor, field, fieldErrors, formError, many, one, type FieldErrors } from '../forms';
import { formatCredits } from '../../domain/money';
import type { ApiKeyDoc } from '../../infra/mongo';
import { NewKey } from '../../gateway/routes/admin';
import { parseInput } from '../../domain/validation';
import { assertManages, currentAccount } from '../access';
import type { ConsoleServices } from '../services';

const KEY_FIELDS = ['name', 'allowed_models', 'expires_at', 'spend_cap_usd'] as const;
const when = (d: Date | null | undefined) => (d ? new Date(d).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '');

function keyState(k: ApiKeyDoc): string {
  if (k.deleted_at) return 'deleted';
  if (!k.enabled) return 'disabled';
  if (k.expires_at && new Date(k.expires_at).getTime() <= Date.now()) return 'expired';
  return 'active';
}

function actor(ctx: CCtx): string {
  const p = ctx.state.session!.principal;
  return p.kind === 'operator' ? 'operator' : `user:${p.userId}`;
}

/**
 * The form as the API's JSON body: the same schema (gateway/routes/admin.ts
 * NewKey) judges it, so the console shows the API's own messages.
 */
function keyBody(f: Record<string, string | string[]>) {
  const body: Record<string, unknown> = { name: one(f.name) };
  if (one(f.models_mode) === 'some') body.allowed_models = many(f.allowed_models);
  const exp = one(f.expires_at);
  if (exp) body.expires_at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(exp) ? `${exp}:00Z` : exp;
  const cap = one(f.spend_cap_usd);
  if (cap) body.spend_cap_usd = cap;
  return body;
}

function createForm(ctx: CCtx, svc: ConsoleServices, f: Record<string, string | string[]> = {}, errors?: FieldErrors): Html {
  const models = svc.deps.catalogue().models.filter((m) => !m.retired);
  const chosen = new Set(many(f.allowed_models));
  const some = one(f.models_mode) === 'some';
  return html`<form method="post" action="/console/keys" class="card" id="new-key" novalidate>
${csrfInput(ctx.state.session!.csrf)}
<h2>New key</h2>
${formError(errors)}
${field({ name: 'name', label: 'Name', value: one(f.name), required: true, errors })}
<fieldset class="field${errors?.allowed_models ? ' has-error' : ''}"><legend>Allowed models</legend>
  <label class="inline"><input type="radio" name="models_mode" value="all"${some ? '' : html` checked`}> Every model</label>
  <label class="inline"><input type="radio" name="models_mode" value="some"${some ? html` checked` : ''}> Only these:</label>
  <div class="model-picks">${models.map((m) => html`<label class="inline"><input type="checkbox" name="allowed_models" value="${m.id}"${chosen.has(m.id) ? html` checked` : ''}> ${m.id}</label>`)}</div>
  ${errorFor(errors, 'allowed_models')}
</fieldset>
${field({ name: 'expires_at', label: 'Expires (UTC, optional)', type: 'datetime-local', value: one(f.expires_at), errors })}
${field({ name: 'spend_cap_usd', label: 'Spend cap in credits (optional)', value: one(f.spend_cap_usd), errors, attrs: html`inputmode="decimal"`, hint: 'Calls are refused once the key has spent this much.' })}
<button type="submit" class="primary">Create key</button>
</form>`;
}

async function keyList(ctx: CCtx, svc: ConsoleServices, form?: Html): Promise<string> {
  const accountId = currentAccount(ctx);
  const keys = (await svc.deps.keys.listByAccount(accountId)).filter((k) => !k.deleted_at).sort((a, b) => +b.created_at - +a.created_at);
  return page(ctx, 'Keys', html`
<div class="table-wrap"><table>
<thead><tr><th>Name</th><th>Key</th><th>Status</th><th>Models</th><th>Expires</th><th class="num">Cap</th><th>Created</th></tr></thead>
<tbody>${keys.length === 0 ? html`<tr><td colspan="7" class="muted">No keys yet.</td></tr>` : keys.map((k) => html`<tr>
<td><a href="/console/keys/${k._id}">${k.name}</a></td><td><code>${k.prefix}…</code></td><td><span class="status status-${keyState(k)}">${keyState(k)}</span></td>
<td>${k.allowed_models === null ? 'all' : k.allowed_models.length === 0 ? 'none' : k.allowed_models.join(', ')}</td><td>${when(k.expires_at) || 'never'}</td>
<td class="num">${k.spend_cap_nano === null ? '—' : formatCredits(k.spend_cap_nano)}</td><td>${when(k.created_at)}</td></tr>`)}</tbody>
</table></div>
${form ?? createForm(ctx, svc)}`);
}

async function keyDetail(ctx: CCtx, svc: ConsoleServices, k: ApiKeyDoc, opts: { plaintext?: string; created?: boolean } = {}): Promise<string> {
  const [spent, calls, audit] = await Promise.all([
    svc.deps.wallet.keySpend(k._id),
    svc.usageQuery.forKey(k._id, 50),
    svc.audit.forTarget(k._id, 20),
  ]);
  const csrf = ctx.state.session!.csrf;
  const state = keyState(k);
  return page(ctx, `Key ${k.name}`, html`
${opts.plaintext ? html`<section class="card reveal" role="status">
  <p>${opts.created ? 'Your new key. Copy it now; you can reveal it again from this page.' : 'The key (this view was recorded in the audit log):'}</p>
  <p><code class="secret" data-testid="plaintext">${opts.plaintext}</code> <button type="button" data-copy=".secret">Copy</button></p>
</section>` : ''}
<section class="card">
<dl class="facts">
  <dt>Status</dt><dd><span class="status status-${state}" data-testid="key-status">${state}</span></dd>
  <dt>Key</dt><dd><code>${k.prefix}…</code></dd>
  <dt>Allowed models</dt><dd>${k.allowed_models === null ? 'every model' : k.allowed_models.length === 0 ? 'none' : k.allowed_models.join(', ')}</dd>
  <dt>Expires</dt><dd>${when(k.expires_at) || 'never'}</dd>
  <dt>Spend cap</dt><dd>${k.spend_cap_nano === null ? 'none' : formatCredits(k.spend_cap_nano)}</dd>
  <dt>Spent</dt><dd>${formatCredits(spent)}</dd>
  <dt>Created</dt><dd>${when(k.created_at)}</dd>
</dl>
<div class="actions">
${k.secret
    ? (state !== 'deleted' && !opts.plaintext ? html`<form method="post" action="/console/keys/${k._id}/reveal">${csrfInput(csrf)}<button type="submit">Reveal key</button></form>` : '')
    : html`<p class="muted" data-testid="legacy">This is a legacy key stored only as a hash: it cannot be revealed.</p>`}
${state === 'active' || state === 'expired' ? html`<form method="post" action="/console/keys/${k._id}/disable" data-confirm="Disable this key? Calls with it are refused at once.">${csrfInput(csrf)}<button type="submit">Disable</button></form>` : ''}
${state !== 'deleted' ? html`<form method="post" action="/console/keys/${k._id}/delete" data-confirm="Delete this key for good?">${csrfInput(csrf)}<button type="submit" class="danger">Delete</button></form>` : ''}
</div>
</section>
<section class="card"><h2>Call history</h2>
<div class="table-wrap"><table><thead><tr><th>When</th><th>Model</th><th>Status</th><th class="num">In</th><th class="num">Out</th><th class="num">Cached</th><th class="num">Credits</th><th>Request id</th></tr></thead>
<tbody>${calls.length === 0 ? html`<tr><td colspan="8" class="muted">No calls yet.</td></tr>` : calls.map((r) => html`<tr><td>${when(r.created_at)}</td><td>${r.model ?? ''}</td><td>${r.status}</td>
<td class="num">${r.input_tokens}</td><td class="num">${r.output_tokens}</td><td class="num">${r.cached_tokens}</td><td class="num">${formatCredits(r.status === 'in_flight' ? r.reserved_nano : r.cost_nano)}</td>
<td><a href="/console/lookup?id=${r.request_id}"><code>${r.request_id}</code></a></td></tr>`)}</tbody></table></div></section>
<section class="card"><h2>Audit record</h2>
${audit.length === 0 ? html`<p class="muted">Nothing recorded.</p>` : html`<ul class="audit" data-testid="audit">${audit.map((a) => html`<li>${when(a.created_at)} · <strong>${a.action}</strong> by ${a.actor}</li>`)}</ul>`}
</section>
<p><a href="/console/keys">All keys</a></p>`);
}

export function keyRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const load = async (ctx: CCtx): Promise<ApiKeyDoc> => {
    const k = await svc.deps.keys.get(ctx.params.id);
    await assertManages(svc, ctx, k.account_id, `key ${ctx.params.id}`);
    return k;
  };

  router.get('/console/keys', signedIn, async (ctx) => {
    ctx.type = 'html';
    ctx.body = await keyList(ctx, svc);
  });

  router.post('/console/keys', signedIn, async (ctx) => {
    const accountId = currentAccount(ctx);
    const f = ctx.state.form ?? {};
    try {
      const input = parseInput('body', NewKey, keyBody(f));
      const { doc, plaintext } = await svc.deps.keys.create(accountId, {
        name: input.name,
        allowed_models: input.allowed_models,
        expires_at: input.expires_at,
        enabled: input.enabled,
        spend_cap_nano: input.spend_cap_usd,
      });
      await svc.audit.record({ account_id: accountId, actor: actor(ctx), action: 'key.create', target: doc._id });
      ctx.status = 201;
      ctx.type = 'html';
      ctx.body = await keyDetail(ctx, svc, doc, { plaintext, created: true });
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await keyList(ctx, svc, createForm(ctx, svc, f, fieldErrors(err, KEY_FIELDS)));
    }
  });

  router.get('/console/keys/:id', signedIn, async (ctx) => {
    ctx.type = 'html';
    ctx.body = await keyDetail(ctx, svc, await load(ctx));
  });

  router.post('/console/keys/:id/reveal', signedIn, async (ctx) => {
    const k = await load(ctx);
    const plaintext = await svc.deps.keys.reveal(k._id);
    await svc.audit.record({ account_id: k.account_id, actor: actor(ctx), action: 'key.reveal', target: k._id });
    svc.deps.log.info('api key revealed', { trace: ctx.state.requestId, key_id: k._id, actor: actor(ctx) });
    ctx.type = 'html';
    ctx.body = await keyDetail(ctx, svc, k, { plaintext });
  });

  router.post('/console/keys/:id/disable', signedIn, async (ctx) => {
    const k = await load(ctx);
    await svc.deps.keys.update(k._id, { enabled: false });
    await svc.audit.record({ account_id: k.account_id, actor: actor(ctx), action: 'key.disable', target: k._id });
    ctx.redirect(`/console/keys/${k._id}`);
  });

  router.post('/console/keys/:id/delete', signedIn, async (ctx) => {
    const k = await load(ctx);
    await svc.deps.keys.remove(k._id);
    await svc.audit.record({ account_id: k.account_id, actor: actor(ctx), action: 'key.delete', target: k._id });
    ctx.redirect(`/console/keys/${k._id}`);
  });
}
