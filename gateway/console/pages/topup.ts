import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html, type Html } from '../html';
import { page } from '../layout';
import { csrfInput, field, fieldErrors, formError, one, type FieldErrors } from '../forms';
import { parseCredits } from '../../../domain/money';
import { inputAmount, plainAmount, usd, usdText } from '../money';
import { when } from '../time';
import { GatewayError } from '../../../domain/errors';
import { TOPUP_MINIMUM_NANO } from '../../../capabilities/accounts/accounts';
import type { LedgerDoc } from '../../../capabilities/accounts/store';
import { currentAccount } from '../access';
import type { ConsoleServices } from '../services';


/** What a ledger row of money in (or taken back out of a payment) is, in words: its kind, and for an adjustment its op. */
function moneyInKind(e: LedgerDoc): string {
  if (e.kind === 'grant') return 'signup grant';
  if (e.kind === 'topup') return 'top-up';
  if (e._id.includes(':refund:')) return 'refund of a top-up';
  if (e._id.includes(':dispute:')) return 'disputed top-up';
  if (e._id.includes(':credit:')) return 'credit';
  return 'adjustment';
}

async function topUpPage(ctx: CCtx, svc: ConsoleServices, opts: { amount?: string; errors?: FieldErrors; banner?: Html } = {}): Promise<string> {
  const accountId = currentAccount(ctx);
  const [balance, topups] = await Promise.all([
    svc.deps.wallet.balance(accountId),
    svc.deps.db.Ledger.find({ account_id: accountId, kind: { $in: ['topup', 'grant', 'adjust'] } }).sort({ created_at: -1 }).limit(20).lean<LedgerDoc[]>(),
  ]);
  return page(ctx, 'Top-up', html`
${opts.banner ?? ''}
<section class="cards"><div class="card stat"><p class="label">Balance</p><p class="value" data-testid="balance">${usd(balance)}</p></div></section>
<form method="post" action="/console/topup" class="card" novalidate>
  ${csrfInput(ctx.state.session!.csrf)}
  <h2>Add credits</h2>
  ${formError(opts.errors)}
  ${field({ name: 'amount_usd', label: 'Amount in USD', value: opts.amount ?? inputAmount(TOPUP_MINIMUM_NANO), required: true, errors: opts.errors,
    attrs: html`inputmode="decimal"`, hint: `Minimum ${usdText(TOPUP_MINIMUM_NANO)}. You pay on the payment processor's checkout page.` })}
  <button type="submit" class="primary">Continue to checkout</button>
</form>
<section class="card"><h2>Recent top-ups, refunds and credits</h2>
<div class="table-wrap"><table><thead><tr><th>When</th><th>Kind</th><th class="num">Amount</th><th>Reference</th></tr></thead>
<tbody>${topups.map((e) => html`<tr><td>${when(e.created_at)}</td><td>${moneyInKind(e)}</td><td class="num">${usd(e.amount_nano)}</td><td><code>${e.ref ?? ''}</code></td></tr>`)}</tbody></table></div>
</section>`);
}

/**
 * The typed amount in nano, or why it cannot be paid, in words. The billing service checks the same rules
 * again (the minimum, whole cents); this says which one the amount breaks.
 */
function topUpAmount(typed: string): number {
  const refuse = (why: string) => new GatewayError('invalid_request', why, { param: 'amount_usd' });
  const text = plainAmount(typed);
  if (!text) throw refuse(`Enter an amount in USD, at least ${usdText(TOPUP_MINIMUM_NANO)}.`);
  if (!/^-?\d+(\.\d+)?$/.test(text)) throw refuse('Enter the amount as a number in USD, like 150 or 150.25.');
  if ((text.split('.')[1] ?? '').length > 2) throw refuse('Enter whole cents: at most 2 decimals (a payment cannot take a fraction of a cent).');
  let nano: number;
  try {
    nano = parseCredits(text);
  } catch {
    throw refuse('That amount is too large for one top-up; enter a smaller one.');
  }
  if (nano < TOPUP_MINIMUM_NANO) throw refuse(`Enter at least ${usdText(TOPUP_MINIMUM_NANO)}: that is the minimum top-up.`);
  return nano;
}

export function topUpRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  router.get('/console/topup', signedIn, async (ctx) => {
    const accountId = currentAccount(ctx);
    let banner: Html | undefined;
    const topUpId = typeof ctx.query.topup === 'string' ? ctx.query.topup : '';
    if (topUpId) {
      const credited = await svc.billing.isCredited(accountId, topUpId);
      banner = credited
        ? html`<p class="notice ok" role="status" data-testid="topup-done">Payment received: your balance has been credited.</p>`
        : html`<p class="notice" role="status" hx-get="/console/topup?topup=${topUpId}" hx-select=".notice" hx-trigger="every 2s" hx-swap="outerHTML">Waiting for the payment processor to confirm…</p>`;
    } else if (ctx.query.cancelled) {
      banner = html`<p class="notice" role="status">Checkout cancelled; nothing was charged.</p>`;
    }
    ctx.type = 'html';
    ctx.body = await topUpPage(ctx, svc, { banner });
  });

  router.post('/console/topup', signedIn, async (ctx) => {
    const accountId = currentAccount(ctx);
    const amount = one(ctx.state.form?.amount_usd);
    try {
      const nano = topUpAmount(amount);
      // The same call as POST /api/v1/billing/checkout (gateway/routes/payments.ts); the processor's page takes the payment.
      const by = ctx.state.session!.principal.kind === 'user' ? `user:${(ctx.state.session!.principal as { userId: string }).userId}` : 'operator';
      const checkout = await svc.billing.startCheckout(accountId, nano, by);
      ctx.redirect(checkout.url);
    } catch (err) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = await topUpPage(ctx, svc, { amount, errors: fieldErrors(err, ['amount_usd']) });
    }
  });
}
