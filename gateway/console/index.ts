import Router from '@koa/router';
import type { Next } from 'koa';
import compose from 'koa-compose';
import type { Logger } from '../../platform/logger';
import type { Middleware } from '../context';
import { GatewayError } from '../../domain/errors';
import { isStoreUnavailable } from '../../platform/store-retry';
import type { ServiceDeps } from '../deps';
import type { ConsoleState, CCtx } from './context';
import { html } from './html';
import { barePage, page } from './layout';
import { assetRoutes } from './assets';
import { consoleServices, type ConsoleServices } from './services';
import { sessionLoader, setSessionCookie } from './guard';
import { requireSession } from './access';
import { signInRoutes } from './pages/signin';
import { overviewRoutes } from './pages/overview';
import { keyRoutes } from './pages/keys';
import { topUpRoutes } from './pages/topup';
import { usageRoutes } from './pages/usage';
import { taskRoutes } from './pages/tasks';
import { modelRoutes } from './pages/models';
import { accountRoutes } from './pages/accounts';
import { knowledgeRoutes } from './pages/knowledge';
import { agentRoutes } from './pages/agents';
import { channelRoutes } from './pages/channels';
import { batchRoutes } from './pages/batches';

/** Headers of every console answer: nothing framed, no inline script, nothing cached. */
async function securityHeaders(ctx: CCtx, next: Next) {
  ctx.set({
    'content-security-policy':
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: http: https:; media-src 'self' http: https:; " +
      "connect-src 'self'; form-action 'self' https://checkout.stripe.com; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
  });
  await next();
  if (!ctx.path.startsWith('/console/assets/')) ctx.set('cache-control', 'no-store');
}

/** Refusals as HTML pages (the API's JSON shapes are for API clients). */
const consoleErrors = (log: Logger) => async (ctx: CCtx, next: Next) => {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) throw new GatewayError('not_found', 'page not found', { status: 404 });
  } catch (thrown) {
    let err: GatewayError;
    if (isStoreUnavailable(thrown) || (thrown instanceof GatewayError && thrown.status >= 500 && /briefly unavailable/i.test(thrown.message))) {
      // What the API answers as "a store is briefly unavailable", in words for people, with the trace id to quote.
      log.warn('store unavailable', { trace: ctx.state.requestId, path: ctx.path, err: thrown });
      err = new GatewayError('internal_error', `The service is briefly unavailable; try again in a minute. (Trace id ${ctx.state.requestId})`, { status: 503, headers: { 'retry-after': '60' } });
    } else if (thrown instanceof GatewayError) err = thrown;
    else {
      log.error('console error', { trace: ctx.state.requestId, path: ctx.path, err: thrown });
      err = new GatewayError('internal_error', `internal error; quote trace id ${ctx.state.requestId}`);
    }
    const status = err.status;
    if (status === 401 && ctx.method === 'GET' && ctx.accepts('html')) {
      ctx.redirect(`/console/signin?next=${encodeURIComponent(ctx.originalUrl)}`);
      return;
    }
    ctx.status = status;
    if (err.headers) ctx.set(err.headers);
    ctx.type = 'html';
    const title = status === 404 ? 'Not found' : status === 403 ? 'Refused' : status === 429 ? 'Too many requests' : status === 503 ? 'Briefly unavailable' : 'Something went wrong';
    const body = html`<p class="form-error">${err.message}</p><p><a href="/console/overview">Back to the console</a></p>`;
    ctx.body = ctx.state.session && ctx.state.current ? page(ctx, title, body) : barePage(title, body);
  }
};

/**
 * The web console at /console: server-rendered pages over the gateway's own
 * services. One middleware for the whole /console tree, so its headers,
 * session, CSRF check and HTML errors apply to every path, routed or not.
 */
export function consoleMiddleware(deps: ServiceDeps): Middleware {
  const svc = consoleServices(deps);
  const assets = new Router<ConsoleState>();
  assetRoutes(assets);
  const router = new Router<ConsoleState>();
  router.get('/console', (ctx) => ctx.redirect(ctx.state.session ? '/console/overview' : '/console/signin'));
  signInRoutes(router, svc);
  const signedIn = requireSession(svc);
  for (const register of [overviewRoutes, keyRoutes, topUpRoutes, usageRoutes, taskRoutes, knowledgeRoutes, agentRoutes, modelRoutes, accountRoutes, channelRoutes, batchRoutes]) {
    register(router, svc, signedIn);
  }
  const chain = compose<CCtx>([
    securityHeaders, consoleErrors(deps.log), assets.routes() as never, sessionLoader(svc), router.routes() as never, router.allowedMethods() as never,
  ]);
  return async (ctx, next) => {
    if (ctx.path === '/console' || ctx.path.startsWith('/console/')) return chain(ctx as CCtx);
    return next();
  };
}
