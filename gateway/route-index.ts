import type Router from '@koa/router';

/** What `Router#match` returns (not exported by @koa/router's types under one name). */
type MatchResult = ReturnType<Router['match']>;
type Layer = Router['stack'][number];

/** The characters where a route path stops being literal text (path-to-regexp 8 syntax). */
const PATTERN_CHAR = /[:*(){}[\]?+!\\]/;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * The literal head of a route: its path up to the first parameter or pattern
 * character, lower-cased, without trailing slashes (a non-strict route
 * matches with or without one). A path that does not start with it cannot
 * match the route. A RegExp route has no head ('').
 */
export function routeHead(layer: Pick<Layer, 'path'>): string {
  if (typeof layer.path !== 'string') return '';
  const cut = layer.path.search(PATTERN_CHAR);
  return (cut === -1 ? layer.path : layer.path.slice(0, cut)).toLowerCase().replace(/\/+$/, '');
}

/**
 * @koa/router finds a request's routes by testing every layer's regexp in
 * turn, each with a debug() call: with the gateway's ~130 routes that is tens
 * of microseconds per request, more than the rest of a balance call's own
 * work. This gives `router` a `match` that first compares the path with each
 * layer's literal head (a string prefix test) and runs the regexp only where
 * it fits, in the router's order, so it returns exactly what the original
 * returns. Paths with non-ASCII characters (where case folding is not plain
 * lower-casing) and routers whose stack changed since are matched the
 * original way. `test/foundation/route-index.test.ts` compares both over
 * every route of the gateway.
 */
export function indexRoutes<R extends Router<any, any>>(router: R): R {
  const original = router.match.bind(router);
  let layers: Layer[] = [];
  let heads: string[] = [];
  const rebuild = () => {
    layers = router.stack.slice();
    heads = layers.map(routeHead);
  };
  rebuild();
  router.match = (path: string, method: string): MatchResult => {
    if (!ASCII_ONLY.test(path)) return original(path, method);
    if (router.stack.length !== layers.length || router.stack[0] !== layers[0]) rebuild();
    const lower = path.toLowerCase();
    const result: MatchResult = { path: [], pathAndMethod: [], route: false };
    const m = method.toUpperCase();
    for (let i = 0; i < layers.length; i++) {
      if (!lower.startsWith(heads[i])) continue;
      const layer = layers[i];
      if (!layer.match(path)) continue;
      result.path.push(layer);
      if (layer.methods.length === 0 || layer.methods.includes(m)) {
        result.pathAndMethod.push(layer);
        if (layer.methods.length > 0) result.route = true;
      }
    }
    return result;
  };
  return router;
}
