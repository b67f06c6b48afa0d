import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { ConsoleState } from './context';
import { sendStaticAsset, staticAsset, type StaticAsset } from '../static-asset';

const require = createRequire(import.meta.url);
const here = (f: string) => fileURLToPath(new URL(`./public/${f}`, import.meta.url));

/**
 * The console's static files: its own CSS and script, and htmx and uPlot
 * straight from node_modules (nothing from a CDN). Read once at start, sent
 * gzipped when the browser accepts it, with an ETag.
 */
const FILES: Record<string, { path: string; type: string }> = {
  'console.css': { path: here('console.css'), type: 'text/css; charset=utf-8' },
  'console.js': { path: here('console.js'), type: 'text/javascript; charset=utf-8' },
  'htmx.min.js': { path: require.resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.iife.min.js': { path: require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.min.css': { path: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

export function assetRoutes(router: Router<ConsoleState>): void {
  const cache = new Map<string, StaticAsset>();
  const load = (name: string): StaticAsset | undefined => {
    const f = FILES[name];
    if (!f) return undefined;
    let a = cache.get(name);
    if (!a) {
      const body = readFileSync(f.path);
      a = staticAsset(f.type, body);
      cache.set(name, a);
    }
    return a;
  };
  router.get('/console/assets/:name', (ctx) => {
    const a = load(ctx.params.name);
    if (!a) return; // 404 from the console's handler
    sendStaticAsset(ctx, a, 'public, max-age=3600');
  });
}
