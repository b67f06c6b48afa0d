import Router from '@koa/router';
import { remainingNano } from '../../domain/api-key';
import { creditsNumber, formatCredits } from '../../domain/money';
import type { ServiceDeps } from '../deps';
import type { AuthState, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';

/** The three numbers every balance view is built from, in nano. */
function figures(auth: AuthState) {
  const remaining = remainingNano(auth.balanceNano, auth.key, auth.keySpendNano);
  const used = Math.max(0, auth.keySpendNano);
  return { remaining, used, total: remaining + used };
}

/** Balance object (spec 1 section 2.5) and billing compatibility objects (2.6). */
export function balanceRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  // Spec 1 section 4.6: the balance is "free; no rate charge" (and 4.7: the billing objects are "not charged, not
  // rate limited"): none of them counts against the account's limits, so a client can read its balance at its limit.
  const free = authenticate(deps, { methods: 'all', billable: false, touchLastUsed: false, rateLimited: false });

  router.get('/v1/key/balance', free, (ctx) => {
    const auth = ctx.state.auth!;
    const f = figures(auth);
    ctx.body = {
      object: 'key.balance',
      remaining_usd: formatCredits(f.remaining),
      used_usd: formatCredits(f.used),
      total_usd: formatCredits(f.total),
      expires_at: auth.key.expires_at === null ? null : Math.floor(auth.key.expires_at / 1000),
    };
  });

  // Mounted with and without /v1; not charged, not rate limited, work at balance 0.
  for (const prefix of ['/v1', '']) {
    router.get(`${prefix}/dashboard/billing/subscription`, free, (ctx) => {
      const auth = ctx.state.auth!;
      const f = figures(auth);
      const total = creditsNumber(f.total);
      ctx.body = {
        object: 'billing_subscription',
        has_payment_method: false,
        soft_limit_usd: total,
        hard_limit_usd: total,
        system_hard_limit_usd: total,
        access_until: auth.key.expires_at === null ? 0 : Math.floor(auth.key.expires_at / 1000),
      };
    });
    router.get(`${prefix}/dashboard/billing/usage`, free, (ctx) => {
      // start_date / end_date are accepted and ignored: always the cumulative value.
      const f = figures(ctx.state.auth!);
      ctx.body = { object: 'list', total_usage: creditsNumber(f.used * 100), daily_costs: [] };
    });
  }
  return router;
}
