import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html, type Html } from '../html';
import { page } from '../layout';
import { when } from '../time';
import { renderPage, shownTag } from '../markdown';
import { csrfInput, errorFor, field, fieldErrors, formError, one, type FieldErrors } from '../forms';
import { checkCsrf } from '../guard';
import { errors } from '../../../domain/errors';
import type { KbDoc } from '../../../capabilities/knowledge/store';
import type { BaseRef } from '../../../capabilities/knowledge/page-store';
import { MAX_DOCUMENT_BYTES, baseProgress, type DocumentView } from '../../../capabilities/knowledge/ingestion';
import { NewBase } from '../../routes/admin-kb';
import { parseInput } from '../../../domain/validation';
import { isMultipart, readMultipart } from '../../media/multipart';
import { currentAccount } from '../access';
import { publicBaseUrl } from '../../../platform/config';
import type { ConsoleServices } from '../services';

const building = (d: DocumentView) => d.latest_build !== null && (d.latest_build.state === 'queued' || d.latest_build.state === 'running');
/**
 * Not final yet: a build queued or running, or one that succeeded but whose
 * pages this read did not see live yet (the list is read in two steps, so a
 * build can finish between them): the rows keep refreshing until they agree.
 */
const settling = (d: DocumentView) => building(d) || (d.latest_build?.state === 'succeeded' && d.live_build_id !== d.latest_build.id);
const BUILD_WORDS: Record<string, string> = { queued: 'queued', running: 'building', succeeded: 'live', failed: 'failed', cancelled: 'cancelled' };
const newestFirst = (docs: DocumentView[]) => [...docs].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
/** An enterprise's base `default` is the enterprise's own (its keys and agents read it), nobody's personal base. */
const enterpriseOwn = (b: Pick<KbDoc, 'kind'>, enterprise: boolean) => enterprise && b.kind === 'personal';
/** A base's name in words: "Enterprise base" for an enterprise's `default` (the store calls every `default` "Personal"). */
export const baseName = (b: Pick<KbDoc, 'kind' | 'name'>, enterprise: boolean): string => (enterpriseOwn(b, enterprise) ? 'Enterprise base' : b.name);
const kbPath = (kb: string) => `/console/kb/${encodeURIComponent(kb)}`;

/** What each field of the new-base form asks for, in words. */
const BASE_MESSAGES = {
  name: 'Give the base a name (1 to 200 characters).',
  kb_id: 'Use 2 to 64 characters: lowercase letters, digits, underscores and hyphens, starting with a letter or digit, and not "default" (or leave it empty).',
  compiler_model: 'Pick a chat model for the llm compiler, or choose the rules compiler.',
};

/** Knowledge bases of the shown account: upload, build progress, browse pages, tags and links, try a search. */
export function knowledgeRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const { kbBases, kbIngestion, knowledge } = svc.deps;

  /** The base, 404 when it is not the shown account's (another account's base id answers the same). */
  const baseOf = async (ctx: CCtx): Promise<{ doc: KbDoc; scope: BaseRef[] }> => {
    const accountId = currentAccount(ctx);
    const doc = await kbBases.get(accountId, ctx.params.kb);
    return { doc, scope: [{ account_id: accountId, kb_id: doc.kb_id }] };
  };

  const listPage = async (ctx: CCtx, form?: { f: Record<string, string | string[]>; errors: FieldErrors }) => {
    const accountId = currentAccount(ctx);
    const bases = await kbBases.list(accountId);
    const counts = await knowledge.bases(bases.map((b) => ({ account_id: accountId, kb_id: b.kb_id })));
    const pagesOf = new Map(counts.map((c) => [c.kb_id, c.page_count]));
    const enterprise = ctx.state.current?.enterprise ?? false;
    const f = form?.f ?? {};
    return page(ctx, 'Knowledge bases', html`
<div class="table-wrap"><table><thead><tr><th>Base</th><th>Id</th><th>Kind</th><th>Readers</th><th>Compiler</th><th class="num">Pages</th></tr></thead>
<tbody>${bases.length === 0 ? html`<tr><td colspan="6" class="muted">No knowledge base yet.</td></tr>` : ''}${bases.map((b) => html`<tr data-kb="${b.kb_id}"><td><a href="${kbPath(b.kb_id)}">${baseName(b, enterprise)}</a></td><td><code>${b.kb_id}</code></td><td>${enterpriseOwn(b, enterprise) ? 'enterprise' : b.kind}</td>
<td>${enterpriseOwn(b, enterprise) ? "the enterprise's keys and agents" : b.kind === 'personal' ? 'you' : b.readers === 'all' ? 'all members' : `${b.readers.length} members`}</td><td>${b.compiler}${b.compiler_model ? ` (${b.compiler_model})` : ''}</td>
<td class="num">${pagesOf.get(b.kb_id) ?? 0}</td></tr>`)}</tbody></table></div>
${enterprise ? html`<form method="post" action="/console/kb" class="card" novalidate>${csrfInput(ctx.state.session!.csrf)}
<h2>New team base</h2>${formError(form?.errors)}
${field({ name: 'name', label: 'Name', value: one(f.name), required: true, errors: form?.errors })}
${field({ name: 'kb_id', label: 'Id (optional)', value: one(f.kb_id), errors: form?.errors, hint: 'Lowercase letters, digits, _ and -; unique across the platform.' })}
<div class="field"><label for="f-compiler">Compiler</label><select id="f-compiler" name="compiler">
<option value="rules"${one(f.compiler) !== 'llm' ? html` selected` : ''}>rules (deterministic)</option><option value="llm"${one(f.compiler) === 'llm' ? html` selected` : ''}>llm (a chat model summarises)</option></select>${errorFor(form?.errors, 'compiler')}</div>
${field({ name: 'compiler_model', label: 'Chat model for the llm compiler', value: one(f.compiler_model), errors: form?.errors })}
<button type="submit" class="primary">Create base</button></form>` : html`<p class="muted">Personal accounts have one base, <code>default</code>. Team bases belong to enterprise accounts.</p>`}`);
  };

  router.get('/console/kb', signedIn, async (ctx) => {
    ctx.type = 'html';
    ctx.body = await listPage(ctx);
  });

  router.post('/console/kb', signedIn, async (ctx) => {
    const accountId = currentAccount(ctx);
    const f = ctx.state.form ?? {};
    try {
      const body: Record<string, unknown> = { name: one(f.name), compiler: one(f.compiler) || 'rules' };
      if (one(f.kb_id)) body.kb_id = one(f.kb_id);
      if (one(f.compiler_model)) body.compiler_model = one(f.compiler_model);
      const doc = await kbBases.create(accountId, parseInput('body', NewBase, body));
      ctx.redirect(kbPath(doc.kb_id));
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await listPage(ctx, { f, errors: fieldErrors(err, ['name', 'kb_id', 'compiler', 'compiler_model'], BASE_MESSAGES) });
    }
  });

  const docRows = (kb: string, docs: DocumentView[], csrf: string, fresh?: string): Html => {
    docs = newestFirst(docs);
    const live = docs.some(settling);
    const p = baseProgress(docs);
    return html`<tbody id="doc-rows"${live ? html` hx-get="${kbPath(kb)}/rows" hx-trigger="every 1s" hx-swap="outerHTML"` : ''}>${docs.some(building) ? html`<tr><td colspan="5" data-testid="build-progress">Building: ${p.documents_done} of ${p.documents_total} documents done, ${p.pages_done} of ${p.pages_total} pages written</td></tr>` : ''}${docs.length === 0
      ? html`<tr><td colspan="5" class="muted">No documents yet.</td></tr>`
      : docs.map((d) => html`<tr data-doc="${d.id}"${fresh === d.id ? html` class="fresh"` : ''}><td>${d.filename}<br><small class="muted">uploaded ${when(d.created_at * 1000)}</small></td><td class="num">${Math.max(1, Math.ceil(d.size / 1024)).toLocaleString('en-US')} KB</td>
<td><span class="status status-${d.latest_build?.state ?? 'none'}" data-testid="build-state" data-state="${d.latest_build?.state ?? ''}">${d.latest_build ? d.latest_build.state : '—'}</span>${d.latest_build?.state === 'running' ? html` <small data-testid="build-pages">${d.latest_build.pages_done}/${d.latest_build.pages_total ?? '?'} pages</small>` : ''}${
  settling(d) ? html` <small class="muted">${building(d) ? 'building pages…' : 'publishing pages…'}</small>` : d.latest_build?.state === 'failed' ? html` <small class="muted">${d.live_build_id ? 'the previous pages stay live' : 'no pages'}</small>` : ''}</td>
<td class="num" data-testid="page-count">${settling(d) ? '…' : d.page_count}</td>
<td><form method="post" action="${kbPath(kb)}/documents/${d.id}/delete" data-confirm="Delete ${d.filename} and its pages?">${csrfInput(csrf)}<button type="submit" class="danger">Delete</button></form></td></tr>`)}</tbody>`;
  };

  const basePage = async (ctx: CCtx, opts: { uploadErrors?: FieldErrors } = {}) => {
    const { doc, scope } = await baseOf(ctx);
    const csrf = ctx.state.session!.csrf;
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    const tag = typeof ctx.query.tag === 'string' ? ctx.query.tag.trim() : '';
    const [docs, tags, results, tagged] = await Promise.all([
      kbIngestion.listDocuments(doc.account_id, doc.kb_id),
      knowledge.tags(scope),
      q ? knowledge.search(scope, q, 20, 0) : null,
      tag ? knowledge.pagesByTag(scope, tag, 100, 0) : null,
    ]);
    const uploaded = typeof ctx.query.uploaded === 'string' ? docs.find((d) => d.id === ctx.query.uploaded) : undefined;
    const shownTags = tags.filter((t) => shownTag(t.tag));
    return page(ctx, `Knowledge base ${baseName(doc, ctx.state.current?.enterprise ?? false)}`, html`
${uploaded ? html`<p class="notice ok" role="status" data-testid="upload-notice">Uploaded <strong>${uploaded.filename}</strong>. ${ctx.query.same ? 'It holds the same content as before, so its pages stay as they are.' : 'Its pages are being built now; its row (first below) updates by itself until they are live.'}</p>` : ''}
<form method="post" action="${kbPath(doc.kb_id)}/documents" enctype="multipart/form-data" class="card" id="upload" novalidate>
  ${csrfInput(csrf)}
  <h2>Upload a document</h2>
  ${formError(opts.uploadErrors)}
  <div class="field${opts.uploadErrors?.file ? ' has-error' : ''}"><label for="f-file">Markdown, text, HTML, PDF or DOCX (up to ${MAX_DOCUMENT_BYTES / 1024 / 1024} MB)</label>
  <input id="f-file" type="file" name="file" required accept=".md,.markdown,.txt,.html,.htm,.pdf,.docx,text/*,application/pdf">${errorFor(opts.uploadErrors, 'file')}</div>
  <button type="submit" class="primary">Upload and build</button>
</form>
<section class="card"><h2>Documents and builds</h2>
<div class="table-wrap"><table><thead><tr><th>Document</th><th class="num">Size</th><th>Build</th><th class="num">Pages</th><th></th></tr></thead>
${docRows(doc.kb_id, docs, csrf, uploaded?.id)}</table></div>${docs.length === 0 ? html`<p class="hint">Upload a document above: its pages, tags and links appear here once the build is live, and agents with this base attached can use them.</p>` : ''}</section>
<form method="get" action="${kbPath(doc.kb_id)}" class="card lookup" role="search">
  <label for="f-q">Try a search</label>
  <div class="row"><input id="f-q" name="q" value="${q}" placeholder="words or a question"><button type="submit">Search</button></div>
</form>
${results ? html`<section class="card" data-testid="search-results"><h2>${results.total_hits} result${results.total_hits === 1 ? '' : 's'} for “${q}”</h2>
${results.results.length === 0 ? html`<p class="muted">Nothing matched.</p>` : html`<ol class="hits">${results.results.map((h) => html`<li>
<a href="${kbPath(doc.kb_id)}/pages/${encodeURIComponent(h.id)}">${h.title}</a> <small class="muted">score ${h.score.toFixed(2)}</small>
<p>${h.snippet}</p>${h.tags.filter(shownTag).map((t) => html`<span class="tag">${t}</span> `)}</li>`)}</ol>`}</section>` : ''}
<section class="card"><h2>Tags</h2>
${shownTags.length === 0 ? html`<p class="muted">No tags yet: they appear once a document's pages are live.</p>` : html`<p class="tags">${shownTags.map((t) => html`<a class="tag" href="${kbPath(doc.kb_id)}?tag=${encodeURIComponent(t.tag)}">${t.tag} (${t.count})</a> `)}</p>`}
${tagged ? html`<h2>Pages tagged “${tag}”</h2><ul>${tagged.items.map((p) => html`<li><a href="${kbPath(doc.kb_id)}/pages/${encodeURIComponent(p.id)}">${p.title}</a> <small class="muted">${p.summary}</small></li>`)}</ul>` : ''}
</section>
<p><a href="/console/kb">All bases</a></p>`);
  };

  router.get('/console/kb/:kb', signedIn, async (ctx) => {
    ctx.type = 'html';
    ctx.body = await basePage(ctx);
  });

  router.get('/console/kb/:kb/rows', signedIn, async (ctx) => {
    const { doc } = await baseOf(ctx);
    ctx.type = 'html';
    ctx.body = docRows(doc.kb_id, await kbIngestion.listDocuments(doc.account_id, doc.kb_id), ctx.state.session!.csrf).value;
  });

  router.post('/console/kb/:kb/documents', signedIn, async (ctx) => {
    const { doc } = await baseOf(ctx);
    if (!isMultipart(ctx)) throw errors.invalidRequest('upload the document as multipart/form-data', 'file');
    const parts = await readMultipart(ctx, MAX_DOCUMENT_BYTES + 1024 * 1024);
    // The session's token travels in the multipart body (the guard could not read it before).
    const token = parts.find((p) => p.kind === 'field' && p.name === '_csrf');
    checkCsrf(ctx, ctx.state.session!.csrf, token?.kind === 'field' ? token.value : undefined);
    const file = parts.find((p) => p.kind === 'file' && p.name === 'file');
    try {
      if (!file || file.kind !== 'file' || !file.filename) throw errors.invalidRequest('choose a file to upload', 'file');
      const view = await kbIngestion.upload(doc.account_id, doc.kb_id, { filename: file.filename, contentType: file.contentType, data: file.data });
      ctx.redirect(`${kbPath(doc.kb_id)}?uploaded=${encodeURIComponent(view.build.document_id)}${view.duplicate ? "&same=1" : ""}`);
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await basePage(ctx, { uploadErrors: fieldErrors(err, ['file', 'filename'], { file: 'Choose a Markdown, text, HTML, PDF or DOCX file to upload.' }) });
    }
  });

  router.post('/console/kb/:kb/documents/:doc/delete', signedIn, async (ctx) => {
    const { doc } = await baseOf(ctx);
    await kbIngestion.deleteDocument(doc.account_id, doc.kb_id, ctx.params.doc);
    ctx.redirect(kbPath(doc.kb_id));
  });

  router.get('/console/kb/:kb/pages/:page', signedIn, async (ctx) => {
    const { doc, scope } = await baseOf(ctx);
    const [p, back, src] = await Promise.all([knowledge.page(scope, ctx.params.page), knowledge.backlinks(scope, ctx.params.page), knowledge.source(scope, ctx.params.page, publicBaseUrl(svc.deps.config))]);
    const link = (id: string, title: string) => html`<a href="${kbPath(doc.kb_id)}/pages/${encodeURIComponent(id)}">${title}</a>`;
    ctx.type = 'html';
    ctx.body = page(ctx, p.title, html`<section class="card">
<p>${p.summary}</p>
<p>${p.tags.filter(shownTag).map((t) => html`<a class="tag" href="${kbPath(doc.kb_id)}?tag=${encodeURIComponent(t)}">${t}</a> `)}</p>
<dl class="facts"><dt>Page id</dt><dd><code>${p.id}</code></dd><dt>Source</dt><dd><a href="${src.url}" data-testid="source-link">${src.filename}</a> · ${src.locator}</dd>
<dt>Confidence</dt><dd>${p.confidence}${p.needs_review ? ' (needs review)' : ''}</dd>${p.aliases.length ? html`<dt>Aliases</dt><dd>${p.aliases.join(', ')}</dd>` : ''}</dl>
</section>
<section class="card"><h2>Body</h2><div class="md" data-testid="page-body">${renderPage(p.body, p.outgoing_links, (id) => `${kbPath(doc.kb_id)}/pages/${encodeURIComponent(id)}`)}</div></section>
<section class="card"><h2>Links</h2>
${p.outgoing_links.length === 0 ? html`<p class="muted">No outgoing links.</p>` : html`<ul>${p.outgoing_links.map((l) => html`<li>${l.resolved ? link(l.id, l.title) : html`${l.title} <small class="muted">(no such page yet)</small>`}</li>`)}</ul>`}
<h2>Linked from</h2>
${back.length === 0 ? html`<p class="muted">No page links here.</p>` : html`<ul>${back.map((b) => html`<li>${link(b.id, b.title)}</li>`)}</ul>`}
</section>
<p><a href="${kbPath(doc.kb_id)}">Back to ${baseName(doc, ctx.state.current?.enterprise ?? false)}</a></p>`);
  });
}
