import type { Next } from 'koa';
import { GatewayError } from '../../domain/errors';
import type { CCtx } from './context';
import type { ConsoleServices } from './services';
import { setSessionCookie } from './guard';

/** Signed in, with the accounts the principal manages and the current one. */
export function requireSession(svc: ConsoleServices) {
  return async (ctx: CCtx, next: Next) => {
    const s = ctx.state.session;
    if (!s) throw new GatewayError('invalid_api_key', 'not signed in', { status: 401 });
    if (s.principal.kind === 'user') {
      const user = await svc.deps.people.getUser(s.principal.userId).catch(() => null);
      if (!user || user.disabled) {
        await svc.sessions.destroy(ctx.state.sessionToken);
        setSessionCookie(ctx, null);
        throw new GatewayError('invalid_api_key', 'not signed in', { status: 401 });
      }
      ctx.state.userEmail = user.email;
    }
    const managed = await svc.access.managed(s.principal);
    const current = await svc.access.sessionAccount(s.principal, s.accountId, managed);
    // An operator's older account is not among the newest listed: listed with them while it is the current one.
    ctx.state.managed = current && !managed.includes(current) ? [current, ...managed] : managed;
    ctx.state.current = current ?? undefined;
    await next();
  };
}

/** The current account, or a page telling the operator to pick one. */
export function currentAccount(ctx: CCtx): string {
  const a = ctx.state.current;
  if (!a) throw new GatewayError('not_found', 'no account to show: pick one under Accounts', { status: 404 });
  return a.id;
}

/** 404 unless the signed-in principal manages this account (an unknown id answers the same). */
export async function assertManages(svc: ConsoleServices, ctx: CCtx, accountId: string, what: string): Promise<void> {
  if (!(ctx.state.managed ?? []).some((a) => a.id === accountId)) {
    if (!(ctx.state.session?.principal.kind === 'operator' && (await svc.access.canManage(ctx.state.session.principal, accountId)))) {
      throw new GatewayError('not_found', `no ${what}`, { status: 404 });
    }
  }
}

