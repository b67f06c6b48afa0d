import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState } from '../context';
import { html } from '../html';
import { page } from '../layout';
import { publicEntry } from '../../routes/models';
import { priceText } from '../money';
import type { ConsoleServices } from '../services';

const PRICE_WORDS: Record<string, string> = {
  input_per_1m: 'per 1M input tokens', output_per_1m: 'per 1M output tokens', cached_per_1m: 'per 1M cached input tokens', per_image: 'per image',
  per_reference_image: 'per reference image', per_second: 'per second of video', per_request: 'per request', per_character: 'per character', per_creation: 'per avatar created',
};

/** A price in words: "$1.25 per 1M input tokens", "$0.03 per image up to 2.4 megapixels, $0.045 above". */
export function priceWords(key: string, v: unknown): string {
  if (typeof v === 'number' || typeof v === 'string') return `${priceText(v)} ${PRICE_WORDS[key] ?? key.replace(/_/g, ' ')}`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (key === 'per_image_tiers' && typeof o.threshold_pixels === 'number') {
      const mp = (o.threshold_pixels / 1_000_000).toLocaleString('en-US', { maximumFractionDigits: 1 });
      return `${priceText(o.low as number)} per image up to ${mp} megapixels, ${priceText(o.high as number)} above`;
    }
    if (key === 'per_second_by_tier') return Object.entries(o).map(([tier, p]) => `${priceText(p as number)} per second at ${tier}`).join(', ');
    return Object.entries(o).map(([k, p]) => `${typeof p === 'number' ? priceText(p) : String(p)} ${k.replace(/_/g, ' ')}`).join(', ');
  }
  return String(v);
}

/** 200000 → "200K tokens", 1048576 → "1M tokens". */
export function contextWords(n: number | null): string {
  if (!n) return '—';
  if (n >= 1_000_000) return `${(n / 1_000_000).toLocaleString('en-US', { maximumFractionDigits: 1 })}M tokens`;
  if (n >= 1000) return `${(n / 1000).toLocaleString('en-US', { maximumFractionDigits: 0 })}K tokens`;
  return `${n} tokens`;
}

const KIND_WORDS: Record<string, string> = { chat: 'Chat', image: 'Images', video: 'Video', music: 'Music', speech: 'Speech', embedding: 'Embeddings', avatar: 'Avatars', transcript: 'Transcription', voice: 'Voice' };

/** The public catalogue, as GET /api/v1/models/public answers it: search and filters (server-side, and live in the browser). */
export function modelRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  router.get('/console/models', signedIn, (ctx) => {
    const all = svc.deps.catalogue().models.filter((m) => !m.retired).map(publicEntry);
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim().toLowerCase() : '';
    const kind = typeof ctx.query.kind === 'string' ? ctx.query.kind : '';
    const caps = ([] as string[]).concat(ctx.query.cap ?? []).filter((c) => typeof c === 'string');
    const kinds = [...new Set(all.map((m) => m.endpoint_type))].sort();
    const allCaps = [...new Set(all.flatMap((m) => m.capabilities))].sort();
    const searchText = (m: (typeof all)[number]) => [m.id, ...m.aliases, m.owned_by, m.endpoint_type, ...m.capabilities].join(' ').toLowerCase();
    const shown = all.filter((m) => (!q || searchText(m).includes(q)) && (!kind || m.endpoint_type === kind) && caps.every((c) => (m.capabilities as string[]).includes(c)));
    ctx.type = 'html';
    ctx.body = page(ctx, 'Models', html`
<form method="get" action="/console/models" class="card filters" role="search" data-filter="tr[data-model]" novalidate>
<div class="field"><label for="f-q">Search</label><input id="f-q" type="search" name="q" value="${q}" placeholder="name, vendor or capability" data-filter-text></div>
<div class="field"><label for="f-kind">Kind</label><select id="f-kind" name="kind" data-filter-kind><option value="">Every kind</option>${kinds.map((k) => html`<option value="${k}"${k === kind ? html` selected` : ''}>${KIND_WORDS[k] ?? k}</option>`)}</select></div>
<fieldset class="field caps"><legend>Capabilities</legend>${allCaps.map((c) => html`<label class="inline"><input type="checkbox" name="cap" value="${c}" data-filter-cap${caps.includes(c) ? html` checked` : ''}> ${c.replace(/_/g, ' ')}</label>`)}</fieldset>
<div class="field buttons"><button type="submit" class="js-hide">Filter</button></div>
</form>
<p class="muted"><span data-filter-count data-testid="model-count">${shown.length}</span> of ${all.length} models. Prices in USD, charged from your balance.</p>
<div class="table-wrap"><table class="models"><thead><tr><th>Model</th><th>Kind</th><th>Prices</th><th>Capabilities</th><th class="num">Context</th></tr></thead>
<tbody>${all.map((m) => html`<tr data-model="${m.id}" data-search="${searchText(m)}" data-kind="${m.endpoint_type}" data-caps="${m.capabilities.join(' ')}"${shown.includes(m) ? '' : html` hidden`}>
<td><strong>${m.id}</strong>${m.aliases.length ? html`<br><small>also ${m.aliases.join(', ')}</small>` : ''}${m.callable ? '' : html` <small class="muted">(not callable)</small>`}</td>
<td>${KIND_WORDS[m.endpoint_type] ?? m.endpoint_type}<br><small>${m.owned_by}</small></td>
<td class="wrap">${Object.entries(m.pricing).map(([k, v]) => html`<div>${priceWords(k, v)}</div>`)}</td>
<td class="wrap">${m.capabilities.map((c) => html`<span class="tag">${c.replace(/_/g, ' ')}</span> `)}</td><td class="num" data-testid="context">${contextWords(m.context_window)}</td></tr>`)}</tbody></table></div>`,
    { actingOn: 'The catalogue and its prices are the same for every account' });
  });
}
