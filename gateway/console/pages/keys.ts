import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html, type Html } from '../html';
import { page } from '../layout';
import { csrfInput, errorFor, field, fieldErrors, formError, many, one, parseForm, type FieldErrors, type HumanMessages } from '../forms';
import type { ApiKeyDoc } from '../../../capabilities/accounts/store';
import { KeyPatch, NewKey } from '../../routes/admin';
import { assertManages, currentAccount } from '../access';
import { cost, inputAmount, limitUsd, plainAmount } from '../money';
import { when } from '../time';
import { auditList, auditOrigin } from '../audit-view';
import type { ConsoleServices } from '../services';

const KEY_FIELDS = ['name', 'allowed_models', 'expires_at', 'spend_cap_usd'] as const;

/** What each key field asks for, in words (the schema's own messages are for API clients). */
export const KEY_MESSAGES: HumanMessages = {
  name: 'Give the key a name (1 to 200 characters, no control characters), so you can tell it apart.',
  allowed_models: 'Pick at least one model, or choose "Every model".',
  expires_at: 'Pick a date and time in the future for the key to stop working, or leave it empty for never.',
  spend_cap_usd: 'Enter the spend cap as an amount in USD, like 25 or 25.50, or leave it empty for no cap.',
};

export function keyState(k: ApiKeyDoc): 'deleted' | 'disabled' | 'expired' | 'active' {
  if (k.deleted_at) return 'deleted';
  if (!k.enabled) return 'disabled';
  if (k.expires_at && new Date(k.expires_at).getTime() <= Date.now()) return 'expired';
  return 'active';
}

function actor(ctx: CCtx): string {
  const p = ctx.state.session!.principal;
  return p.kind === 'operator' ? 'operator' : `user:${p.userId}`;
}

/** `sk-mgateway-…a1b2`: the shared prefix and the key's own last characters. */
export function keyLabel(svc: ConsoleServices, k: Pick<ApiKeyDoc, 'prefix' | 'tail' | 'secret'>): Html {
  const tail = svc.deps.keys.tailOf(k);
  return html`<code class="key-id" data-testid="key-tail">${k.prefix}…${tail ?? ''}</code>`;
}

const modelsText = (k: ApiKeyDoc) => (k.allowed_models === null ? 'every model' : k.allowed_models.length === 0 ? 'none' : k.allowed_models.join(', '));
const localInput = (d: Date | null | undefined) => (d ? new Date(d).toISOString().slice(0, 16) : '');

/**
 * The form as the API's JSON body, with the form's own refusals (`errors`);
 * the same schema (gateway/routes/admin.ts NewKey / KeyPatch) then judges the
 * body (`parseForm`), so every field's error shows at once. Editing sends
 * every field: an empty expiry or cap means "none".
 */
function keyBody(svc: ConsoleServices, f: Record<string, string | string[]>, edit: boolean): { body: Record<string, unknown>; errors: FieldErrors } {
  const body: Record<string, unknown> = { name: one(f.name) };
  const errors: FieldErrors = {};
  if (one(f.models_mode) === 'some') {
    const picked = many(f.allowed_models);
    const known = new Set(svc.deps.catalogue().models.map((m) => m.id));
    if (picked.length === 0 || picked.some((m) => !known.has(m))) errors.allowed_models = KEY_MESSAGES.allowed_models;
    body.allowed_models = picked;
  } else if (edit) body.allowed_models = null;
  const exp = one(f.expires_at);
  if (exp) {
    body.expires_at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(exp) ? `${exp}:00Z` : exp;
    const t = Date.parse(String(body.expires_at));
    if (Number.isFinite(t) && t <= Date.now()) errors.expires_at = KEY_MESSAGES.expires_at;
  } else if (edit) body.expires_at = null;
  const cap = plainAmount(one(f.spend_cap_usd));
  if (cap) body.spend_cap_usd = cap;
  else if (edit) body.spend_cap_usd = null;
  return { body, errors };
}

function keyFields(svc: ConsoleServices, f: Record<string, string | string[]>, errors?: FieldErrors, idp = ''): Html {
  const models = svc.deps.catalogue().models.filter((m) => !m.retired);
  const chosen = new Set(many(f.allowed_models));
  const some = one(f.models_mode) === 'some';
  return html`${field({ name: 'name', label: 'Name', value: one(f.name), required: true, errors })}
<fieldset class="field${errors?.allowed_models ? ' has-error' : ''}"><legend>Allowed models</legend>
  <label class="inline"><input type="radio" name="models_mode" value="all"${some ? '' : html` checked`}> Every model</label>
  <label class="inline"><input type="radio" name="models_mode" value="some"${some ? html` checked` : ''}> Only these:</label>
  <div class="model-picks">${models.map((m) => html`<label class="inline"><input type="checkbox" name="allowed_models" value="${m.id}"${chosen.has(m.id) ? html` checked` : ''}> ${m.id}</label>`)}</div>
  ${errorFor(errors, 'allowed_models')}
</fieldset>
${field({ name: 'expires_at', label: 'Expires (UTC, optional)', type: 'datetime-local', value: one(f.expires_at), errors, hint: 'Empty: the key never expires.' })}
${field({ name: 'spend_cap_usd', label: 'Spend cap in USD (optional)', value: one(f.spend_cap_usd), errors, attrs: html`inputmode="decimal" placeholder="e.g. 25.00"`, hint: 'Calls are refused once the key has spent this much. Empty: no cap.' })}${idp}`;
}

function createForm(ctx: CCtx, svc: ConsoleServices, f: Record<string, string | string[]> = {}, errors?: FieldErrors): Html {
  return html`<form method="post" action="/console/keys" class="card" id="new-key" novalidate>
${csrfInput(ctx.state.session!.csrf)}
<h2>Create a key</h2>
${formError(errors)}
${keyFields(svc, f, errors)}
<button type="submit" class="primary">Create key</button>
</form>`;
}

async function keyList(ctx: CCtx, svc: ConsoleServices, form?: Html): Promise<string> {
  const accountId = currentAccount(ctx);
  const keys = (await svc.deps.keys.listByAccount(accountId)).filter((k) => !k.deleted_at).sort((a, b) => +b.created_at - +a.created_at);
  const spent = await Promise.all(keys.map((k) => svc.deps.wallet.keySpend(k._id)));
  return page(ctx, 'Keys', html`
${keys.length === 0 ? html`<section class="card empty" data-testid="keys-empty"><h2>No keys yet</h2><p>A key lets a program call the gateway and charges this account's balance. Create your first one below; you can limit it to some models, give it an expiry date and a spend cap, and change all of that later.</p><p><a class="button primary" href="#new-key">Create your first key</a></p></section>` : html`
<div class="table-wrap"><table class="keys">
<thead><tr><th>Name</th><th>Key</th><th>Status</th><th>Models</th><th>Expires</th><th class="num">Spent</th><th class="num">Cap</th><th>Created</th></tr></thead>
<tbody>${keys.map((k, i) => html`<tr data-key="${k._id}">
<td><a href="/console/keys/${k._id}">${k.name}</a></td><td>${keyLabel(svc, k)}</td><td><span class="status status-${keyState(k)}">${keyState(k)}</span></td>
<td class="wrap">${modelsText(k)}</td><td>${when(k.expires_at, { empty: 'never' })}</td>
<td class="num" data-testid="key-spent">${cost(spent[i])}</td><td class="num">${k.spend_cap_nano === null ? 'no cap' : limitUsd(k.spend_cap_nano)}</td><td>${when(k.created_at)}</td></tr>`)}</tbody>
</table></div>`}
${form ?? createForm(ctx, svc)}`);
}

function editForm(ctx: CCtx, svc: ConsoleServices, k: ApiKeyDoc, f?: Record<string, string | string[]>, errors?: FieldErrors): Html {
  const values = f ?? {
    name: k.name, models_mode: k.allowed_models === null ? 'all' : 'some', allowed_models: k.allowed_models ?? [],
    expires_at: localInput(k.expires_at), spend_cap_usd: k.spend_cap_nano === null ? '' : inputAmount(k.spend_cap_nano),
  };
  return html`<details class="card" id="edit-key"${errors ? html` open` : ''}><summary>Edit name, models, expiry and spend cap</summary>
<form method="post" action="/console/keys/${k._id}/edit" novalidate>${csrfInput(ctx.state.session!.csrf)}
${formError(errors)}
${keyFields(svc, values, errors)}
<button type="submit" class="primary">Save changes</button></form></details>`;
}

async function keyDetail(ctx: CCtx, svc: ConsoleServices, k: ApiKeyDoc, opts: { plaintext?: string; created?: boolean; notice?: string; edit?: { f: Record<string, string | string[]>; errors: FieldErrors } } = {}): Promise<string> {
  const [spent, calls, audit] = await Promise.all([
    svc.deps.wallet.keySpend(k._id),
    svc.usageQuery.forKey(k._id, 50),
    svc.audit.forTarget(k._id, 20),
  ]);
  const csrf = ctx.state.session!.csrf;
  const state = keyState(k);
  return page(ctx, `Key ${k.name}`, html`
${opts.notice ? html`<p class="notice ok" role="status" data-testid="notice">${opts.notice}</p>` : ''}
${opts.plaintext ? html`<section class="card reveal" role="status">
  <p>${opts.created ? 'Your new key. Copy it now; you can reveal it again from this page.' : 'The key (this view was recorded in the audit log):'}</p>
  <p><code class="secret" data-testid="plaintext">${opts.plaintext}</code> <button type="button" data-copy=".secret">Copy</button></p>
  ${opts.created ? html`<p class="hint">Next: <a href="/console/overview#quickstart">call the gateway with it</a> from the OpenAI, Anthropic or Google SDK, or curl.</p>` : ''}
</section>` : ''}
<section class="card">
<dl class="facts">
  <dt>Status</dt><dd><span class="status status-${state}" data-testid="key-status">${state}</span></dd>
  <dt>Key</dt><dd>${keyLabel(svc, k)}</dd>
  <dt>Allowed models</dt><dd data-testid="key-models">${modelsText(k)}</dd>
  <dt>Expires</dt><dd>${when(k.expires_at, { empty: 'never' })}</dd>
  <dt>Spend cap</dt><dd data-testid="key-cap">${k.spend_cap_nano === null ? 'no cap' : limitUsd(k.spend_cap_nano)}</dd>
  <dt>Spent</dt><dd data-testid="key-spent">${cost(spent)}</dd>
  <dt>Created</dt><dd>${when(k.created_at)}</dd>
</dl>
<div class="actions">
${k.secret
    ? (state !== 'deleted' && !opts.plaintext ? html`<form method="post" action="/console/keys/${k._id}/reveal">${csrfInput(csrf)}<button type="submit">Reveal key</button></form>` : '')
    : html`<p class="muted" data-testid="legacy">This is a legacy key stored only as a hash: it cannot be revealed.</p>`}
${state === 'active' || state === 'expired' ? html`<form method="post" action="/console/keys/${k._id}/disable" data-confirm="Disable this key? Calls with it are refused at once; you can enable it again later.">${csrfInput(csrf)}<button type="submit">Disable</button></form>` : ''}
${state === 'disabled' ? html`<form method="post" action="/console/keys/${k._id}/enable">${csrfInput(csrf)}<button type="submit" class="primary">Enable again</button></form>` : ''}
${state !== 'deleted' ? html`<form method="post" action="/console/keys/${k._id}/delete" data-confirm="Delete this key for good? This cannot be undone.">${csrfInput(csrf)}<button type="submit" class="danger">Delete</button></form>` : ''}
</div>
</section>
${state !== 'deleted' && !k.agent_id ? editForm(ctx, svc, k, opts.edit?.f, opts.edit?.errors) : ''}
<section class="card"><h2>Call history</h2>
<div class="table-wrap"><table><thead><tr><th>When</th><th>Model</th><th>Status</th><th class="num">Tokens in</th><th class="num">Tokens out</th><th class="num">Cached</th><th class="num">Cost</th><th>Request id</th></tr></thead>
<tbody>${calls.length === 0 ? html`<tr><td colspan="8" class="muted">No calls yet. Calls made with this key appear here with their cost.</td></tr>` : calls.map((r) => html`<tr><td>${when(r.created_at)}</td><td>${r.model ?? ''}</td><td>${r.status}</td>
<td class="num">${r.input_tokens.toLocaleString('en-US')}</td><td class="num">${r.output_tokens.toLocaleString('en-US')}</td><td class="num">${r.cached_tokens.toLocaleString('en-US')}</td><td class="num">${cost(r.status === 'in_flight' ? r.reserved_nano : r.cost_nano)}</td>
<td><a href="/console/lookup?id=${r.request_id}"><code>${r.request_id}</code></a></td></tr>`)}</tbody></table></div></section>
<section class="card"><h2>Audit record</h2>
${audit.length === 0 ? html`<p class="muted">Nothing recorded.</p>` : await auditList(svc, audit)}
</section>
<p><a href="/console/keys">All keys</a></p>`);
}

export function keyRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const load = async (ctx: CCtx): Promise<ApiKeyDoc> => {
    const k = await svc.deps.keys.get(ctx.params.id);
    await assertManages(svc, ctx, k.account_id, `key ${ctx.params.id}`);
    return k;
  };
  /** Redirect (303) to the key's page, which shows its plaintext once to this session. */
  const showOnce = async (ctx: CCtx, k: ApiKeyDoc, why: 'created' | 'revealed') => {
    await svc.sessions.markOnce(ctx.state.sessionToken!, `key:${k._id}`);
    ctx.redirect(`/console/keys/${k._id}?${why}=1`);
    ctx.status = 303;
  };
  const record = (ctx: CCtx, k: ApiKeyDoc, action: string, extra: Record<string, unknown> = {}) =>
    svc.audit.record({ account_id: k.account_id, actor: actor(ctx), action, target: k._id, detail: { ...auditOrigin(ctx), ...extra } });

  router.get('/console/keys', signedIn, async (ctx) => {
    ctx.type = 'html';
    ctx.body = await keyList(ctx, svc);
  });

  router.post('/console/keys', signedIn, async (ctx) => {
    const accountId = currentAccount(ctx);
    const f = ctx.state.form ?? {};
    try {
      const { body, errors } = keyBody(svc, f, false);
      const input = parseForm(NewKey, body, KEY_FIELDS, KEY_MESSAGES, errors);
      const { doc } = await svc.deps.keys.create(accountId, {
        name: input.name,
        allowed_models: input.allowed_models,
        expires_at: input.expires_at,
        enabled: input.enabled,
        spend_cap_nano: input.spend_cap_usd,
      });
      await record(ctx, doc, 'key.create');
      await showOnce(ctx, doc, 'created');
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await keyList(ctx, svc, createForm(ctx, svc, f, fieldErrors(err, KEY_FIELDS, KEY_MESSAGES)));
    }
  });

  router.get('/console/keys/:id', signedIn, async (ctx) => {
    const k = await load(ctx);
    const created = !!ctx.query.created;
    // The plaintext once, right after the POST that created or revealed it (POST, redirect, GET); a reload finds it gone.
    const once = (created || !!ctx.query.revealed) && (await svc.sessions.takeOnce(ctx.state.sessionToken, `key:${k._id}`));
    const plaintext = once ? await svc.deps.keys.reveal(k._id) : undefined;
    const notice = ctx.query.saved ? 'Changes saved.' : ctx.query.enabled ? 'The key works again.'
      : (created || ctx.query.revealed) && !once ? 'The key was shown once and is hidden again. Use Reveal key below to see it again (each view is recorded in the audit log).' : undefined;
    ctx.type = 'html';
    ctx.body = await keyDetail(ctx, svc, k, { plaintext, created, notice });
  });

  router.post('/console/keys/:id/edit', signedIn, async (ctx) => {
    const k = await load(ctx);
    const f = ctx.state.form ?? {};
    try {
      const { body, errors } = keyBody(svc, f, true);
      const input = parseForm(KeyPatch, body, KEY_FIELDS, KEY_MESSAGES, errors);
      const next = await svc.deps.keys.update(k._id, {
        name: input.name, allowed_models: input.allowed_models, expires_at: input.expires_at, spend_cap_nano: input.spend_cap_usd,
      });
      const changed = [
        next.name !== k.name && 'name',
        JSON.stringify(next.allowed_models) !== JSON.stringify(k.allowed_models) && 'models',
        +(next.expires_at ?? 0) !== +(k.expires_at ?? 0) && 'expiry',
        next.spend_cap_nano !== k.spend_cap_nano && 'spend cap',
      ].filter((x): x is string => !!x);
      await record(ctx, k, 'key.update', { changed });
      ctx.redirect(`/console/keys/${k._id}?saved=1`);
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await keyDetail(ctx, svc, k, { edit: { f, errors: fieldErrors(err, KEY_FIELDS, KEY_MESSAGES) } });
    }
  });

  router.post('/console/keys/:id/reveal', signedIn, async (ctx) => {
    const k = await load(ctx);
    await svc.deps.keys.reveal(k._id); // a legacy or agent key is refused here, before anything is recorded
    await record(ctx, k, 'key.reveal');
    svc.deps.log.info('api key revealed', { trace: ctx.state.requestId, key_id: k._id, actor: actor(ctx) });
    await showOnce(ctx, k, 'revealed');
  });

  router.post('/console/keys/:id/disable', signedIn, async (ctx) => {
    const k = await load(ctx);
    await svc.deps.keys.update(k._id, { enabled: false });
    await record(ctx, k, 'key.disable');
    ctx.redirect(`/console/keys/${k._id}`);
  });

  router.post('/console/keys/:id/enable', signedIn, async (ctx) => {
    const k = await load(ctx);
    await svc.deps.keys.update(k._id, { enabled: true });
    await record(ctx, k, 'key.enable');
    ctx.redirect(`/console/keys/${k._id}?enabled=1`);
  });

  router.post('/console/keys/:id/delete', signedIn, async (ctx) => {
    const k = await load(ctx);
    await svc.deps.keys.remove(k._id);
    await record(ctx, k, 'key.delete');
    ctx.redirect(`/console/keys/${k._id}`);
  });
}
