import { GatewayError } from '../../domain/errors';
import { rkeys } from '../../infra/redis';
import type { GatewayDeps } from '../deps';
import type { Ctx, Middleware } from '../context';

/** A crashed gateway's concurrency slots expire after this; live requests renew it. */
export const LEASE_MS = 60_000;
const RENEW_EVERY_MS = LEASE_MS / 3;

/**
 * Per-account limits (spec 1 section 8): requests per minute over a sliding
 * 60 s window and concurrent in-flight requests, decided atomically in Redis.
 * Unlimited unless the account has limits set.
 */
export function rateLimit(deps: GatewayDeps): Middleware {
  return async function limitRate(ctx: Ctx, next) {
    const account = ctx.state.auth?.account;
    if (!account || (!account.rpm && !account.concurrency)) return next();
    const rpm = account.rpm ?? 0;
    const conc = account.concurrency ?? 0;
    const member = ctx.state.requestId;
    const leaseKey = rkeys.rateLeases(account.id);
    const [allowed, reason, rpmUsed, concUsed, resetMs] = await deps.redis.rateAcquire(
      rkeys.rateWindow(account.id), leaseKey, rpm, conc, member, LEASE_MS,
    );
    const headers: Record<string, string> = {};
    if (rpm) {
      headers['x-ratelimit-limit-requests'] = String(rpm);
      headers['x-ratelimit-remaining-requests'] = String(Math.max(0, rpm - rpmUsed));
      headers['x-ratelimit-reset-requests'] = `${Math.max(1, Math.ceil(resetMs / 1000))}s`;
    }
    if (conc) {
      headers['x-ratelimit-limit-concurrency'] = String(conc);
      headers['x-ratelimit-remaining-concurrency'] = String(Math.max(0, conc - concUsed));
    }
    if (!allowed) {
      headers['retry-after'] = String(Math.max(1, Math.ceil(resetMs / 1000)));
      const what = reason === 'rpm' ? `${rpm} requests per minute` : `${conc} concurrent requests`;
      throw new GatewayError('rate_limit_exceeded', `Rate limit reached for this account: ${what}. Retry after ${headers['retry-after']} s.`, { headers });
    }
    ctx.set(headers);
    if (!conc) return next();

    // Hold the slot until the response is finished or the client went away.
    let released = false;
    const renew = setInterval(() => void deps.redis.leaseRenew(leaseKey, member, LEASE_MS).catch(() => undefined), RENEW_EVERY_MS);
    const release = () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      void deps.redis.zrem(leaseKey, member).catch(() => undefined);
    };
    ctx.res.once('close', release);
    try {
      await next();
    } finally {
      // Streaming bodies keep the slot until the socket closes; plain bodies free it now.
      if (!isStreamingBody(ctx)) release();
    }
  };
}

function isStreamingBody(ctx: Ctx): boolean {
  const body = ctx.body as { pipe?: unknown } | undefined;
  return !!body && typeof body.pipe === 'function';
}
