import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState } from '../context';
import { html, raw } from '../html';
import { page } from '../layout';
import { formatCredits } from '../../domain/money';
import { currentAccount } from '../access';
import type { ConsoleServices } from '../services';
import { openTasks, taskRow } from './tasks';

/** JSON for a <script type="application/json"> island: `<` escaped so it cannot end the element. */
export const jsonIsland = (v: unknown) => raw(JSON.stringify(v).replace(/</g, '\\u003c'));

export function overviewRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  router.get('/console/overview', signedIn, async (ctx) => {
    const accountId = currentAccount(ctx);
    const [balance, spend, tasks] = await Promise.all([
      svc.deps.wallet.balance(accountId),
      svc.usageQuery.spend(accountId, 30),
      openTasks(svc, accountId, 20),
    ]);
    const top = spend.models.slice(0, 6);
    const chart = {
      days: spend.days,
      series: top.map((m) => ({ label: m.model, values: m.perDay.map((n) => Number(formatCredits(n))) })),
    };
    ctx.type = 'html';
    ctx.body = page(ctx, 'Overview', html`
<section class="cards">
  <div class="card stat"><p class="label">Balance</p><p class="value" data-testid="balance">${formatCredits(balance)}</p><p><a href="/console/topup">Top up</a></p></div>
  <div class="card stat"><p class="label">Spend, last 30 days</p><p class="value" data-testid="spend-30d">${formatCredits(spend.totalNano)}</p><p><a href="/console/usage">Usage</a></p></div>
  <div class="card stat"><p class="label">Open tasks</p><p class="value">${tasks.length}</p><p><a href="/console/tasks">Tasks</a></p></div>
</section>
<section class="card">
  <h2>Spend by day and model</h2>
  ${spend.models.length === 0 ? html`<p class="muted">No charged calls in the last 30 days.</p>` : html``}
  <div id="spend-chart" class="chart" role="img" aria-label="Spend per day, stacked by model"></div>
  <script type="application/json" id="spend-data">${jsonIsland(chart)}</script>
</section>
<section class="card">
  <h2>Spend by model</h2>
  ${spend.models.length === 0 ? html`<p class="muted">Nothing yet.</p>` : html`<div class="table-wrap"><table class="bars">
  <thead><tr><th>Model</th><th class="num">Credits</th><th class="bar-col"></th></tr></thead>
  <tbody>${spend.models.map((m) => html`<tr><td>${m.model}</td><td class="num">${formatCredits(m.totalNano)}</td>
  <td class="bar-col"><meter min="0" max="${spend.totalNano}" value="${m.totalNano}">${formatCredits(m.totalNano)}</meter></td></tr>`)}</tbody></table></div>`}
</section>
<section class="card">
  <h2>Open async tasks</h2>
  ${tasks.length === 0 ? html`<p class="muted">No task is running.</p>` : html`<div class="table-wrap"><table>
  <thead><tr><th>Task</th><th>Model</th><th>Status</th><th>Submitted</th></tr></thead>
  <tbody>${tasks.map((t) => taskRow(t, false))}</tbody></table></div>`}
</section>`, { extraHead: html`<link rel="stylesheet" href="/console/assets/uPlot.min.css"><script src="/console/assets/uPlot.iife.min.js" defer></script>` });
  });
}
