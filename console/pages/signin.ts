import type Router from '@koa/router';
import type { ConsoleState, CCtx } from '../context';
import { html } from '../html';
import { barePage } from '../layout';
import { csrfInput, field, fieldErrors, formError, one, type FieldErrors } from '../forms';
import { presessionToken, setSessionCookie } from '../guard';
import type { ConsoleServices } from '../services';
import type { Principal } from '../../services/account-access';

/** Only same-site console paths are followed after sign-in. */
function safeNext(v: unknown): string {
  const s = typeof v === 'string' ? v : '';
  return /^\/console(\/[\w\-./?=&%]*)?$/.test(s) && !s.startsWith('//') ? s : '/console/overview';
}

function signInForm(ctx: CCtx, opts: { email?: string; errors?: FieldErrors; operatorErrors?: FieldErrors; next: string }) {
  const token = presessionToken(ctx);
  return barePage('Sign in', html`
<form method="post" action="/console/signin" class="card" novalidate>
  ${csrfInput(token)}<input type="hidden" name="next" value="${opts.next}">
  ${formError(opts.errors)}
  ${field({ name: 'email', label: 'Email', type: 'email', value: opts.email, required: true, errors: opts.errors, autocomplete: 'username' })}
  ${field({ name: 'password', label: 'Password', type: 'password', required: true, errors: opts.errors, autocomplete: 'current-password' })}
  <button type="submit" class="primary">Sign in</button>
</form>
<details class="card"${opts.operatorErrors ? html` open` : ''}>
  <summary>Operator sign-in (admin token)</summary>
  <form method="post" action="/console/signin" novalidate>
    ${csrfInput(token)}<input type="hidden" name="next" value="${opts.next}"><input type="hidden" name="mode" value="operator">
    ${formError(opts.operatorErrors)}
    ${field({ name: 'token', label: 'Admin token', type: 'password', required: true, errors: opts.operatorErrors, autocomplete: 'off' })}
    <button type="submit">Sign in as operator</button>
  </form>
</details>`);
}

export function signInRoutes(router: Router<ConsoleState>, svc: ConsoleServices): void {
  router.get('/console/signin', (ctx) => {
    if (ctx.state.session) return ctx.redirect('/console/overview');
    ctx.type = 'html';
    ctx.body = signInForm(ctx, { next: safeNext(ctx.query.next) });
  });

  router.post('/console/signin', async (ctx) => {
    const f = ctx.state.form ?? {};
    const next = safeNext(one(f.next));
    const operator = one(f.mode) === 'operator';
    let principal: Principal;
    try {
      principal = operator
        ? await svc.signIn.withAdminToken(one(f.token), ctx.ip)
        : await svc.signIn.withPassword(one(f.email), typeof f.password === 'string' ? f.password : '', ctx.ip);
    } catch (err) {
      const errors = fieldErrors(err, operator ? ['token'] : ['email', 'password']);
      ctx.status = (err as { status?: number }).status ?? 400;
      if ((err as { headers?: Record<string, string> }).headers) ctx.set((err as { headers: Record<string, string> }).headers);
      ctx.type = 'html';
      ctx.body = signInForm(ctx, { email: one(f.email), next, ...(operator ? { operatorErrors: errors } : { errors }) });
      return;
    }
    // A fresh session id at every sign-in (no fixation); the old one, if any, ends.
    await svc.sessions.destroy(ctx.state.sessionToken);
    const accounts = await svc.access.managed(principal, { limit: 1 });
    const { token } = await svc.sessions.create(principal, accounts[0]?.id ?? null);
    setSessionCookie(ctx, token);
    ctx.redirect(next);
  });

  router.post('/console/signout', async (ctx) => {
    await svc.sessions.destroy(ctx.state.sessionToken);
    setSessionCookie(ctx, null);
    ctx.redirect('/console/signin');
  });
}
