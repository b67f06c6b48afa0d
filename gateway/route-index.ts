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
 * work. This gives `router` a `match` that looks only at the layers filed
 * under the path's first segment (plus those that cannot be filed), compares
 * the path with each one's literal head (a string prefix test) and runs the
 * regexp only where it fits, in the router's order, so it returns exactly
 * what the original returns. Paths with non-ASCII characters (where case
 * folding is not plain lower-casing) are matched the original way; a stack
 * that grew is indexed again (routes are not renamed after mounting).
 * `test/foundation/route-index.test.ts` compares both over every route of
 * the gateway.
 */
export function indexRoutes<R extends Router<any, any>>(router: R): R {
  const original = router.match.bind(router);
  let layers: Layer[] = [];
  let heads: string[] = [];
  /** Per first path segment, the layers a path with that segment may match (in router order); `wild`: any path. */
  let bySegment = new Map<string, number[]>();
  let wild: number[] = [];
  const rebuild = () => {
    layers = router.stack.slice();
    heads = layers.map(routeHead);
    const segs = layers.map(firstSegment);
    wild = segs.flatMap((seg, i) => (seg === null ? [i] : []));
    bySegment = new Map();
    for (const seg of new Set(segs)) {
      if (seg !== null) bySegment.set(seg, segs.flatMap((s, i) => (s === seg || s === null ? [i] : [])));
    }
  };
  rebuild();
  router.match = (path: string, method: string): MatchResult => {
    if (!ASCII_ONLY.test(path)) return original(path, method);
    if (router.stack.length !== layers.length || router.stack[0] !== layers[0]) rebuild();
    const lower = path.toLowerCase();
    const end = lower.indexOf('/', 1);
    const candidates = lower.charCodeAt(0) === 47 ? (bySegment.get(lower.slice(1, end === -1 ? undefined : end)) ?? wild) : wild;
    const result: MatchResult = { path: [], pathAndMethod: [], route: false };
    const m = method.toUpperCase();
    for (const i of candidates) {
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

/**
 * The first segment every path matching this route has (lower-cased), or
 * null when that is not certain: the literal text must hold a whole first
 * segment, closed by a '/' or, for a route without any pattern, by its end.
 */
function firstSegment(layer: Pick<Layer, 'path'>): string | null {
  if (typeof layer.path !== 'string') return null;
  const cut = layer.path.search(PATTERN_CHAR);
  const literal = (cut === -1 ? layer.path : layer.path.slice(0, cut)).toLowerCase();
  const closed = /^\/([^/]+)\//.exec(literal);
  if (closed) return closed[1];
  const whole = cut === -1 ? /^\/([^/]+)\/?$/.exec(literal) : null;
  return whole ? whole[1] : null;
}
