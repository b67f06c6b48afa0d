import type Router from '@koa/router';
import type { ConsoleState, CCtx } from '../context';
import { html } from '../html';
import { barePage } from '../layout';
import { csrfInput, field, fieldErrors, formError, one, type FieldErrors } from '../forms';
import { presessionToken, setSessionCookie } from '../guard';
import type { ConsoleServices } from '../services';
import type { Principal } from '../../../capabilities/accounts/account-access';

/** Only same-site console paths are followed after sign-in. */
function safeNext(v: unknown): string {
  const s = typeof v === 'string' ? v : '';
  return /^\/console(\/[\w\-./?=&%]*)?$/.test(s) && !s.startsWith('//') ? s : '/console/overview';
}

const SIGN_IN_MESSAGES: Record<string, string> = {
  email: 'Enter the email address you signed up with.',
  password: 'Enter your password.',
  token: 'Paste the operator admin token (ADMIN_TOKEN).',
};

function signInForm(ctx: CCtx, opts: { email?: string; errors?: FieldErrors; next: string }) {
  const token = presessionToken(ctx);
  return barePage('Sign in', html`
<form method="post" action="/console/signin" class="card" novalidate>
  ${csrfInput(token)}<input type="hidden" name="next" value="${opts.next}">
  ${formError(opts.errors)}
  ${field({ name: 'email', label: 'Email', type: 'email', value: opts.email, required: true, errors: opts.errors, autocomplete: 'username' })}
  ${field({ name: 'password', label: 'Password', type: 'password', required: true, errors: opts.errors, autocomplete: 'current-password' })}
  <button type="submit" class="primary">Sign in</button>
</form>
<p class="hint">Running this gateway? <a href="/console/signin/operator${opts.next !== '/console/overview' ? `?next=${encodeURIComponent(opts.next)}` : ''}">Operator sign-in</a> with the admin token.</p>`);
}

/** The operator's own page: the admin token, away from the people's sign-in. */
function operatorForm(ctx: CCtx, opts: { errors?: FieldErrors; next: string }) {
  const token = presessionToken(ctx);
  return barePage('Operator sign-in', html`
<form method="post" action="/console/signin" class="card" id="operator-signin" novalidate>
  ${csrfInput(token)}<input type="hidden" name="next" value="${opts.next}"><input type="hidden" name="mode" value="operator">
  <p class="muted">For whoever runs this gateway: the admin token (<code>ADMIN_TOKEN</code>) shows every account and the operator pages.</p>
  ${formError(opts.errors)}
  ${field({ name: 'token', label: 'Admin token', type: 'password', required: true, errors: opts.errors, autocomplete: 'off' })}
  <button type="submit" class="primary">Sign in as operator</button>
</form>
<p class="hint"><a href="/console/signin">Back to the sign-in for people</a></p>`);
}

export function signInRoutes(router: Router<ConsoleState>, svc: ConsoleServices): void {
  router.get('/console/signin', (ctx) => {
    if (ctx.state.session) return ctx.redirect('/console/overview');
    ctx.type = 'html';
    ctx.body = signInForm(ctx, { next: safeNext(ctx.query.next) });
  });

  router.get('/console/signin/operator', (ctx) => {
    if (ctx.state.session) return ctx.redirect('/console/overview');
    ctx.type = 'html';
    ctx.body = operatorForm(ctx, { next: safeNext(ctx.query.next) });
  });

  router.post('/console/signin', async (ctx) => {
    const f = ctx.state.form ?? {};
    const next = safeNext(one(f.next));
    const operator = one(f.mode) === 'operator';
    const show = (errors: FieldErrors) => {
      ctx.type = 'html';
      ctx.body = operator ? operatorForm(ctx, { errors, next }) : signInForm(ctx, { email: one(f.email), next, errors });
    };
    // An empty field is no attempt: its own message, and nothing counted towards the lockout.
    const given: Record<string, string> = operator ? { token: one(f.token) } : { email: one(f.email), password: typeof f.password === 'string' ? f.password : '' };
    const missing = Object.keys(given).filter((name) => !given[name]);
    if (missing.length > 0) {
      ctx.status = 400;
      return show(Object.fromEntries(missing.map((name) => [name, SIGN_IN_MESSAGES[name]])));
    }
    let principal: Principal;
    try {
      principal = operator ? await svc.signIn.withAdminToken(given.token, ctx.ip) : await svc.signIn.withPassword(given.email, given.password, ctx.ip);
    } catch (err) {
      const errors = fieldErrors(err, operator ? ['token'] : ['email', 'password'], SIGN_IN_MESSAGES);
      ctx.status = (err as { status?: number }).status ?? 400;
      if ((err as { headers?: Record<string, string> }).headers) ctx.set((err as { headers: Record<string, string> }).headers);
      return show(errors);
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
