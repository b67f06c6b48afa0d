import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState } from '../context';
import { html } from '../html';
import { page } from '../layout';
import { publicEntry } from '../../gateway/routes/models';
import type { ConsoleServices } from '../services';

const PRICE_LABELS: Record<string, string> = {
  input_per_1m: 'input / 1M tokens', output_per_1m: 'output / 1M tokens', cached_per_1m: 'cached / 1M tokens', per_image: 'per image',
  per_reference_image: 'per reference image', per_second: 'per second', per_request: 'per request', per_character: 'per character', per_creation: 'per creation',
};

/** The public catalogue, as GET /api/v1/models/public answers it. */
export function modelRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  router.get('/console/models', signedIn, (ctx) => {
    const models = svc.deps.catalogue().models.filter((m) => !m.retired).map(publicEntry);
    ctx.type = 'html';
    ctx.body = page(ctx, 'Models', html`<p class="muted">${models.length} models. Prices in credits.</p>
<div class="table-wrap"><table class="models"><thead><tr><th>Model</th><th>Kind</th><th>Prices</th><th>Capabilities</th><th>Context</th></tr></thead>
<tbody>${models.map((m) => html`<tr><td><strong>${m.id}</strong>${m.aliases.length ? html`<br><small>${m.aliases.join(', ')}</small>` : ''}${m.callable ? '' : html` <small class="muted">(not callable)</small>`}</td>
<td>${m.endpoint_type}<br><small>${m.owned_by}</small></td>
<td>${Object.entries(m.pricing).map(([k, v]) => html`<div>${typeof v === 'number' ? v : typeof v === 'object' ? Object.entries(v as Record<string, unknown>).map(([a, b]) => `${a}: ${b}`).join(', ') : String(v)} <small>${PRICE_LABELS[k] ?? k.replace(/_/g, ' ')}</small></div>`)}</td>
<td>${m.capabilities.map((c) => html`<span class="tag">${c}</span> `)}</td><td class="num">${m.context_window ?? ''}</td></tr>`)}</tbody></table></div>`);
  });
}
