import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '../infra/redis';

/** A lock left by a process that died mid-change frees itself after this long (longer than a change's retries). */
export const RECORD_LOCK_MS = 30_000;
const UNLOCK = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/**
 * Runs `change` while holding the Redis lock `lockKey` (SET NX with an
 * expiry; freed only by its holder), so changes of one record (a key, an
 * account) run one at a time, each on the document as the previous one left
 * it: FerretDB has no atomic read-modify-write, and the Redis records of two
 * racing changes could land in either order. Waits up to `waitMs` for the
 * lock (through a Redis restart too), then throws `busy()`.
 */
export async function withRecordLock<T>(redis: RedisClient, lockKey: string, waitMs: number, busy: () => Error, change: () => Promise<T>): Promise<T> {
  const holder = randomBytes(8).toString('hex');
  const deadline = Date.now() + waitMs;
  for (;;) {
    const got = await redis.set(lockKey, holder, 'PX', RECORD_LOCK_MS, 'NX').catch(() => null);
    if (got === 'OK') break;
    if (Date.now() > deadline) throw busy();
    await sleep(50);
  }
  try {
    return await change();
  } finally {
    await redis.eval(UNLOCK, 1, lockKey, holder).catch(() => undefined);
  }
}
