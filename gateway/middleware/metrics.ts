import type { Metrics } from '../../platform/metrics/registry';
import type { CatalogueDeps } from '../../capabilities/catalogue/deps';
import type { Ctx, Middleware } from '../context';

/** Which API a route template belongs to: the four chat protocols by name, the rest by family. */
export function protocolOf(method: string, route: string): string {
  if (route === '/v1/chat/completions') return 'chat-completions';
  if (route === '/v1/messages' || route === '/v1/messages/count_tokens') return 'messages';
  if (route.startsWith('/v1/responses')) return 'responses';
  if ((route === '/v1beta/models/:target' || route === '/v1/models/:target') && method === 'POST') return 'generate-content';
  if (/^\/v1\/(images|videos|music|audio|transcripts|avatars|clip-templates|voices)/.test(route)) return 'media';
  if (route.startsWith('/v1/embeddings')) return 'embeddings';
  if (route.startsWith('/admin/')) return 'admin';
  if (route.startsWith('/mcp')) return 'mcp';
  if (route.startsWith('/console')) return 'console';
  if (route.startsWith('/api/') || route.startsWith('/v1/')) return 'management';
  return 'other';
}

/** The route template @koa/router matched (never the raw path: ids would explode the series). */
function routeOf(ctx: Ctx): string {
  const { _matchedRoute: matched, _matchedRouteName: name } = ctx as unknown as { _matchedRoute?: unknown; _matchedRouteName?: unknown };
  if (typeof matched === 'string') return matched;
  // A route whose path is a regular expression carries its template as its name (routes/captured.ts).
  if (typeof name === 'string') return name;
  if (ctx.path === '/console' || ctx.path.startsWith('/console/')) return '/console';
  return 'unmatched';
}

/**
 * Request count and latency by route template, protocol, model and status,
 * and the streams open right now. Mounted between the access log and the
 * error handler (gateway/app.ts) only when metrics are on, so it sees the
 * status the client got. A streamed answer is measured when its socket closes.
 */
export function httpMetrics(deps: Pick<CatalogueDeps, 'catalogue'>, m: Metrics): Middleware {
  const protocols = new Map<string, string>();
  const modelOf = (requested: string | undefined): string => {
    if (!requested) return 'none';
    return deps.catalogue().resolve(requested)?.id === requested ? requested : 'unknown';
  };
  return async function measureRequest(ctx: Ctx, next) {
    try {
      await next();
    } finally {
      const route = routeOf(ctx);
      const key = `${ctx.method} ${route}`;
      let protocol = protocols.get(key);
      if (protocol === undefined) protocols.set(key, (protocol = protocolOf(ctx.method, route)));
      const model = modelOf(ctx.state.model);
      const startedAt = ctx.state.startedAt;
      const body = ctx.body as { pipe?: unknown } | null | undefined;
      if (body && typeof body.pipe === 'function' && !ctx.res.writableFinished) {
        const labels = { protocol };
        m.streamsOpen.inc(labels);
        ctx.res.once('close', () => {
          m.streamsOpen.dec(labels);
          m.httpDuration.observe({ route, protocol, model, status: String(ctx.res.statusCode) }, (performance.now() - startedAt) / 1000);
        });
      } else {
        m.httpDuration.observe({ route, protocol, model, status: String(ctx.status) }, (performance.now() - startedAt) / 1000);
      }
    }
  };
}
