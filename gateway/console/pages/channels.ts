import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html } from '../html';
import { page } from '../layout';
import { csrfInput } from '../forms';
import { GatewayError } from '../../../domain/errors';
import type { ChannelTestResult } from '../../../capabilities/catalogue/channel-test';
import type { ConsoleServices } from '../services';

/** Operators only: anyone else gets the same 404 as an unknown page. */
function operatorOnly(ctx: CCtx): void {
  if (ctx.state.session?.principal.kind !== 'operator') throw new GatewayError('not_found', 'page not found', { status: 404 });
}

/**
 * The operator's channel view (docs/channels.md): every channel with its
 * breaker, enable/disable and "test this channel". Editing fields stays in
 * the management API; the rules are the same services either way.
 */
export function channelRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  const render = async (ctx: CCtx, result?: ChannelTestResult) => {
    const rows = await svc.deps.channels.list();
    const s = ctx.state.session!;
    ctx.type = 'html';
    ctx.body = page(ctx, 'Channels', html`
${result ? html`<section class="card" aria-live="polite"><h2>Test of <code>${result.channel}</code>: ${result.ok ? 'OK' : 'failed'}</h2>
<p>${result.model} (${result.upstream_model}) over ${result.adapter}: HTTP ${result.status === null ? 'none' : String(result.status)} in ${String(result.latency_ms)} ms</p>
${result.error ? html`<p class="form-error">${result.error}</p>` : ''}<pre>${result.snippet}</pre></section>` : ''}
<div class="table-wrap"><table>
<thead><tr><th>Channel</th><th>Vendor</th><th>Adapter</th><th class="num">Priority</th><th class="num">Weight</th><th>Models</th><th>Health</th><th>State</th><th></th></tr></thead>
<tbody>${rows.map(({ record: c }) => {
      const h = svc.deps.channelHealth.state(c.id);
      return html`<tr><td><code>${c.id}</code></td><td>${c.vendor}</td><td>${c.adapter}</td><td class="num">${String(c.priority)}</td><td class="num">${String(c.weight)}</td>
<td>${c.models.map((m) => m.model).join(', ')}</td><td>${h.state.replace('_', '-')}${h.consecutive_failures ? ` (${h.consecutive_failures} failures)` : ''}</td>
<td>${c.enabled ? 'enabled' : 'disabled'}</td>
<td><form method="post" action="/console/channels/${c.id}/enabled">${csrfInput(s.csrf)}<input type="hidden" name="enabled" value="${c.enabled ? 'false' : 'true'}"><button type="submit">${c.enabled ? 'Disable' : 'Enable'}</button></form>
<form method="post" action="/console/channels/${c.id}/test">${csrfInput(s.csrf)}<button type="submit">Test</button></form></td></tr>`;
    })}</tbody>
</table></div>`);
  };

  router.get('/console/channels', signedIn, async (ctx) => {
    operatorOnly(ctx);
    await render(ctx);
  });
  router.post('/console/channels/:id/enabled', signedIn, async (ctx) => {
    operatorOnly(ctx);
    await svc.deps.channels.update(ctx.params.id, { enabled: ctx.state.form?.enabled === 'true' });
    ctx.redirect('/console/channels');
  });
  router.post('/console/channels/:id/test', signedIn, async (ctx) => {
    operatorOnly(ctx);
    const entry = await svc.deps.channels.get(ctx.params.id);
    await render(ctx, await svc.deps.channelTester.test(entry.record));
  });
}
