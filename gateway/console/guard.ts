import { randomBytes } from 'node:crypto';
import type { Next } from 'koa';
import { GatewayError } from '../../domain/errors';
import { safeEqual } from '../../platform/secrets';
import type { CCtx } from './context';
import { one, readForm } from './forms';
import { SESSION_COOKIE, SESSION_IDLE_S } from './session';
import type { ConsoleServices } from './services';

export const PRESESSION_COOKIE = 'mg_console_pre';

export function cookieOptions(ctx: CCtx, maxAgeS: number | null, sameSite: 'lax' | 'strict' = 'lax') {
  return {
    httpOnly: true,
    secure: ctx.secure,
    sameSite,
    path: '/',
    overwrite: true,
    ...(maxAgeS === null ? { expires: new Date(0) } : { maxAge: maxAgeS * 1000 }),
  } as const;
}

export function setSessionCookie(ctx: CCtx, token: string | null): void {
  ctx.cookies.set(SESSION_COOKIE, token ?? '', cookieOptions(ctx, token ? SESSION_IDLE_S : null));
}

const csrfRefused = (why: string) => new GatewayError('permission_denied', `request refused: ${why}`, { status: 403 });

/**
 * A state change must come from the console's own pages: a cross-site
 * Origin or Sec-Fetch-Site is refused outright, and the synchroniser token
 * of the session (form field `_csrf` or header `x-csrf-token`) must match.
 * Before sign-in, the token is a double-submit cookie set by the sign-in page.
 */
/**
 * The origin this request was sent to, for comparison with the browser's `Origin` only (nothing handed out is
 * built from it: absolute URLs come from PUBLIC_BASE_URL). Not Koa's `ctx.origin`: in Koa 3 that is the request's
 * own `Origin` header, so comparing with it refused nothing.
 */
export function targetOrigin(ctx: CCtx): string {
  return `${ctx.protocol}://${ctx.host}`;
}

export function checkSameOrigin(ctx: CCtx): void {
  const origin = ctx.get('origin');
  if (origin && origin !== targetOrigin(ctx)) throw csrfRefused('cross-origin request');
  const site = ctx.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') throw csrfRefused(`cross-site request (${site})`);
}

export function checkCsrf(ctx: CCtx, expected: string, sentInBody?: string): void {
  checkSameOrigin(ctx);
  const sent = ctx.get('x-csrf-token') || sentInBody || one(ctx.state.form?._csrf);
  if (!sent || !safeEqual(sent, expected)) throw csrfRefused('missing or wrong CSRF token');
}

/** The pre-session token of the sign-in form (login CSRF). */
export function presessionToken(ctx: CCtx): string {
  const existing = ctx.cookies.get(PRESESSION_COOKIE);
  if (existing && /^[\w-]{20,100}$/.test(existing)) return existing;
  const token = randomBytes(24).toString('base64url');
  ctx.cookies.set(PRESESSION_COOKIE, token, cookieOptions(ctx, 3600, 'strict'));
  return token;
}

/** The only routes that take multipart bodies; each checks the CSRF field itself. */
const MULTIPART_PATHS: RegExp[] = [/^\/console\/kb\/[^/]+\/documents$/];

/** Loads the session and, for POSTs, the form; enforces CSRF on every state change. */
export function sessionLoader(svc: ConsoleServices) {
  return async (ctx: CCtx, next: Next) => {
    const token = ctx.cookies.get(SESSION_COOKIE);
    const session = await svc.sessions.get(token);
    if (session) {
      ctx.state.session = session;
      ctx.state.sessionToken = token;
    }
    if (!['GET', 'HEAD', 'OPTIONS'].includes(ctx.method)) {
      ctx.state.form = await readForm(ctx);
      if (ctx.path === '/console/signin') {
        checkSameOrigin(ctx);
        const pre = ctx.cookies.get(PRESESSION_COOKIE);
        const sent = one(ctx.state.form._csrf);
        if (!pre || !sent || !safeEqual(pre, sent)) throw csrfRefused('missing or wrong CSRF token');
      } else {
        if (!session) throw new GatewayError('invalid_api_key', 'not signed in', { status: 401 });
        if (/^multipart\/form-data\b/i.test(ctx.get('content-type')) && MULTIPART_PATHS.some((r) => r.test(ctx.path))) {
          // File uploads: the token is a field of the multipart body, which the upload route reads and checks
          // (checkCsrf with the field) before it does anything; the origin is checked here already.
          checkSameOrigin(ctx);
        } else {
          checkCsrf(ctx, session.csrf);
        }
      }
    }
    await next();
  };
}
