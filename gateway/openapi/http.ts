import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { GatewayState } from '../context';
import { buildOpenApiDocument } from './document';
import { sendStaticAsset, staticAsset, type StaticAsset } from '../static-asset';

const require = createRequire(import.meta.url);
const here = (f: string) => fileURLToPath(new URL(`./public/${f}`, import.meta.url));

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/**
 * The reference page's files: Swagger UI (swagger-ui-dist) straight from
 * node_modules and our page and initializer; nothing from a CDN. Read once,
 * gzipped once, served with an ETag.
 */
const FILES: Record<string, { path: string; type: string }> = {
  'swagger-ui.css': { path: require.resolve('swagger-ui-dist/swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { path: require.resolve('swagger-ui-dist/swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'docs.js': { path: here('docs.js'), type: 'text/javascript; charset=utf-8' },
};

/** Only this origin: the page can reach nothing else. Swagger UI sets inline styles. */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";


/** `GET /openapi.json` (the document, built once per process) and `GET /docs` (the reference page). */
export function openApiRoutes(opts: { version: string } = { version: (require('../../package.json') as { version: string }).version }): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const cache = new Map<string, StaticAsset>();
  const cached = (key: string, make: () => StaticAsset) => {
    let a = cache.get(key);
    if (!a) cache.set(key, (a = make()));
    return a;
  };

  router.get(OPENAPI_PATH, (ctx) => {
    const doc = cached('openapi', () => staticAsset('application/json; charset=utf-8', Buffer.from(JSON.stringify(buildOpenApiDocument({ version: opts.version })))));
    ctx.set('access-control-allow-origin', '*');
    sendStaticAsset(ctx, doc, 'no-cache');
  });
  router.get(DOCS_PATH, (ctx) => {
    ctx.set('content-security-policy', CSP);
    sendStaticAsset(ctx, cached('page', () => staticAsset('text/html; charset=utf-8', readFileSync(here('docs.html')))), 'no-cache');
  });
  router.get(`${DOCS_PATH}/assets/:name`, (ctx) => {
    const f = FILES[ctx.params.name];
    if (!f) return; // 404 in the error handler
    sendStaticAsset(ctx, cached(ctx.params.name, () => staticAsset(f.type, readFileSync(f.path))), 'public, max-age=3600');
  });
  return router;
}
