import { GatewayError } from '../../domain/errors';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import type { RateDecision } from '../../capabilities/accounts/auth-lookup';
import type { PlatformDeps } from '../../capabilities/deps';
import type { Ctx, Middleware } from '../context';
import { countRateLimited } from '../../platform/metrics/index';
import { LiveList } from '../../platform/live-list';

/** A crashed gateway's concurrency slots expire after this; live requests renew it. */
export const LEASE_MS = 60_000;
const RENEW_EVERY_MS = LEASE_MS / 3;

/**
 * Per-account limits (spec 1 section 8): requests per minute over a sliding
 * 60 s window and concurrent in-flight requests. The verdict is taken
 * atomically in Redis during authentication (same round trip, see
 * capabilities/accounts/auth-lookup.ts); this middleware turns it into headers or a 429.
 */
export function rateLimit(): Middleware {
  return async function limitRate(ctx: Ctx, next) {
    const rate = ctx.state.rate;
    if (rate) applyRate(ctx, rate);
    return next();
  };
}

/** The limiter's verdict: its headers on the response, or the 429 (with them) when it refused. */
export function applyRate(ctx: Ctx, rate: RateDecision): void {
  const headers = rateHeaders(rate);
  if (!rate.allowed) {
    countRateLimited(rate.reason === 'concurrency' ? 'concurrency' : 'rpm');
    headers['retry-after'] = String(Math.max(1, Math.ceil(rate.resetMs / 1000)));
    const what = rate.reason === 'rpm' ? `${rate.rpm} requests per minute` : `${rate.concurrency} concurrent requests`;
    throw new GatewayError('rate_limit_exceeded', `Rate limit reached for this account: ${what}. Retry after ${headers['retry-after']} s.`, { headers });
  }
  ctx.set(headers);
}

function rateHeaders(rate: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {};
  if (rate.rpm) {
    headers['x-ratelimit-limit-requests'] = String(rate.rpm);
    headers['x-ratelimit-remaining-requests'] = String(Math.max(0, rate.rpm - rate.rpmUsed));
    headers['x-ratelimit-reset-requests'] = `${Math.max(1, Math.ceil(rate.resetMs / 1000))}s`;
  }
  if (rate.concurrency) {
    headers['x-ratelimit-limit-concurrency'] = String(rate.concurrency);
    headers['x-ratelimit-remaining-concurrency'] = String(Math.max(0, rate.concurrency - rate.concUsed));
  }
  return headers;
}

/** A concurrency slot this request holds; the settling wallet script may free it (gateway/chat/settle.ts). */
export interface HeldLease {
  accountId: string;
  member: string;
  /** The slot was freed in Redis by someone else (the settle script): stop renewing, free nothing more. */
  freed(): void;
}

/** Every live slot of this process, renewed together by one timer (not one timer per request). Not a Map: platform/live-list.ts says why. */
const live = new LiveList<{ redis: PlatformDeps['redis']; key: string; member: string }>();
let renewTimer: NodeJS.Timeout | null = null;

function renewAll(): void {
  for (const l of live.values()) void l.redis.leaseRenew(l.key, l.member, LEASE_MS).catch(() => undefined);
}

/**
 * Keep a granted concurrency slot until the response is finished or the
 * client went away (streams keep it until the socket closes); renew the lease
 * while the request lives. Returns the function that frees it. Every held
 * lease is renewed by one shared interval (at most RENEW_EVERY_MS after it was
 * taken, well inside LEASE_MS), not by a timer per request.
 */
export function holdLease(deps: Pick<PlatformDeps, 'redis'>, ctx: Ctx, accountId: string): () => void {
  const key = accountRedisKeys.rateLeases(accountId);
  const member = ctx.state.requestId;
  const entry = live.add({ redis: deps.redis, key, member });
  if (!renewTimer) {
    renewTimer = setInterval(renewAll, RENEW_EVERY_MS);
    renewTimer.unref();
  }
  let done = false;
  const stop = (): boolean => {
    if (done) return false;
    done = true;
    live.delete(entry);
    if (live.size === 0 && renewTimer) {
      clearInterval(renewTimer);
      renewTimer = null;
    }
    return true;
  };
  const release = () => {
    if (stop()) void deps.redis.zrem(key, member).catch(() => undefined);
  };
  ctx.state.lease = { accountId, member, freed: () => void stop() };
  ctx.res.once('close', release);
  return release;
}

export function isStreamingBody(ctx: Ctx): boolean {
  const body = ctx.body as { pipe?: unknown } | undefined;
  return !!body && typeof body.pipe === 'function';
}
