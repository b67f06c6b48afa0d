import type { RouteCtx } from './tasks';

export interface Route {
  method: string;
  /** Matched against the path after /ch/{channel}; capture groups become ctx.params. */
  pattern: RegExp;
  handler: (ctx: RouteCtx) => Promise<void> | void;
}

export function matchRoute(routes: Route[], method: string, path: string): { route: Route; params: string[] } | null {
  for (const route of routes) {
    if (route.method !== method) continue;
    const m = route.pattern.exec(path);
    if (m) return { route, params: m.slice(1).map((p) => decodeURIComponent(p)) };
  }
  return null;
}
