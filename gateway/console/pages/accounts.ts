import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState } from '../context';
import { html } from '../html';
import { page } from '../layout';
import { csrfInput, one } from '../forms';
import { usd } from '../money';
import { assertManages } from '../access';
import { targetOrigin } from '../guard';
import type { ConsoleServices } from '../services';
import { parseUrl } from '../../../domain/url-policy';

/** Switching the shown account; the operator's list of every account. */
export function accountRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  router.post('/console/account', signedIn, async (ctx) => {
    const id = one(ctx.state.form?.account_id);
    await assertManages(svc, ctx, id, `account ${id}`);
    const s = ctx.state.session!;
    await svc.sessions.save(ctx.state.sessionToken!, { ...s, accountId: id });
    const back = parseUrl(ctx.get('referer'));
    ctx.redirect(back && back.origin === targetOrigin(ctx) && back.pathname.startsWith('/console/') ? back.pathname : '/console/overview');
  });

  router.get('/console/accounts', signedIn, async (ctx) => {
    const rows = await Promise.all((ctx.state.managed ?? []).map(async (a) => ({ ...a, balance: usd(await svc.deps.wallet.balance(a.id)) })));
    const s = ctx.state.session!;
    ctx.type = 'html';
    ctx.body = page(ctx, 'Accounts', html`
<div class="table-wrap"><table>
<thead><tr><th>Account</th><th>Id</th><th>Kind</th><th class="num">Balance</th><th></th></tr></thead>
<tbody>${rows.map((a) => html`<tr><td>${a.name}</td><td><code>${a.id}</code></td><td>${a.enterprise ? 'enterprise' : 'personal'}</td><td class="num">${a.balance}</td>
<td><form method="post" action="/console/account">${csrfInput(s.csrf)}<input type="hidden" name="account_id" value="${a.id}"><button type="submit"${a.id === ctx.state.current?.id ? html` disabled` : ''}>Show</button></form></td></tr>`)}</tbody>
</table></div>`);
  });
}
