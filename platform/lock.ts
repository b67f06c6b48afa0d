import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from './redis';

/** A holder that dies frees the lock after this long; a live holder renews it every third of it. */
export const LOCK_LEASE_MS = 30_000;
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
/** Polls of a held lock start here and double up to the cap. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 50;

export interface LockOptions {
  /** How long to wait for a held lock (through a Redis restart too); 0 tries once. */
  waitMs: number;
  /** What is thrown when the wait runs out. */
  busy: () => Error;
  /** The lease (default LOCK_LEASE_MS). */
  leaseMs?: number;
}

/** Extends `key`'s lease if `holder` still holds it (1), else nothing (0). */
export function renewHeld(redis: RedisClient, key: string, holder: string, leaseMs: number): Promise<unknown> {
  return redis.eval(RENEW, 1, key, holder, String(leaseMs));
}

/** Frees `key` if `holder` still holds it. */
export function releaseHeld(redis: RedisClient, key: string, holder: string): Promise<unknown> {
  return redis.eval(RELEASE, 1, key, holder);
}

/**
 * Runs `fn` while holding the Redis lock `key` (SET NX with a lease, renewed
 * while `fn` runs, released only by its holder). FerretDB makes no
 * conditional update atomic, so every read-compare-write of one record (a
 * key, an account, a top-up, an agent key's decision, a knowledge document or
 * base, an Idempotency-Key takeover) runs under one of these, each on the
 * document as the previous holder left it.
 */
export async function withLock<T>(redis: RedisClient, key: string, opts: LockOptions, fn: () => Promise<T>): Promise<T> {
  const leaseMs = opts.leaseMs ?? LOCK_LEASE_MS;
  const holder = randomBytes(12).toString('hex');
  const deadline = Date.now() + opts.waitMs;
  for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
    const got = await redis.set(key, holder, 'PX', leaseMs, 'NX').catch(() => null);
    if (got === 'OK') break;
    if (Date.now() >= deadline) throw opts.busy();
    await sleep(poll);
  }
  const renew = setInterval(() => void renewHeld(redis, key, holder, leaseMs).catch(() => undefined), leaseMs / 3);
  try {
    return await fn();
  } finally {
    clearInterval(renew);
    await releaseHeld(redis, key, holder).catch(() => undefined);
  }
}
