import Router from '@koa/router';
import type { PlatformDeps } from '../../capabilities/deps';
import type { CatalogueDeps } from '../../capabilities/catalogue/deps';
import type { GatewayState } from '../context';

/** How long one dependency may take to answer a readiness probe before it counts as down. */
const READY_CHECK_TIMEOUT_MS = 4_000;

type Check = 'mongo' | 'redis' | 'temporal';

function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

export function healthRoutes(deps: PlatformDeps & CatalogueDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  /**
   * Liveness (Kubernetes `livenessProbe`): the process answers. No store is asked: a Redis or store outage
   * is readiness's (`/readyz` takes the replica out of traffic), and the gateway recovers from one on its own,
   * so a liveness probe failing with it would restart every replica at once and cut their open streams.
   */
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok', models: deps.catalogue().models.length };
  });
  /**
   * Readiness: every store a request needs answers (MongoDB/FerretDB, Redis, Temporal). 503 with the
   * failing ones named while any does not, so a load balancer or Kubernetes sends this replica no traffic.
   */
  router.get('/readyz', async (ctx) => {
    const checks: Record<Check, () => Promise<unknown>> = {
      // A read through the store's tables, not a ping: FerretDB answers a ping from its own process even when its
      // database does not answer (its connections all held: 2026-11-30, docs/money.md), and so can a MongoDB whose
      // primary is gone. `maxTimeMS` ends the read on the store's side too, so probes never pile up in the pool.
      mongo: async () => {
        await deps.db.Account.findById('__readiness_probe__', { _id: 1 }).maxTimeMS(READY_CHECK_TIMEOUT_MS - 250).lean();
      },
      redis: () => deps.redis.ping(),
      // A gRPC deadline inside ours: the connection's retries of an unreachable server end with the call.
      temporal: () => {
        const connection = deps.temporal.connection;
        return connection.withDeadline(Date.now() + READY_CHECK_TIMEOUT_MS - 250, () => connection.workflowService.getSystemInfo({}));
      },
    };
    const results = await Promise.all(
      (Object.keys(checks) as Check[]).map(async (name) => {
        try {
          await within(READY_CHECK_TIMEOUT_MS, checks[name]());
          return [name, 'ok'] as const;
        } catch (err) {
          return [name, err instanceof Error ? err.message : String(err)] as const;
        }
      }),
    );
    const failing = results.filter(([, r]) => r !== 'ok');
    ctx.status = failing.length === 0 ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: failing.length === 0 ? 'ready' : 'not ready', checks: Object.fromEntries(results) };
  });
  return router;
}
