import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../platform/redis';

/**
 * A short Redis lock (SET NX PX, released only by its holder). FerretDB makes
 * no conditional update atomic, so the read-compare-write steps of the
 * ingestion (a build's pointer flip, a document's deletion, re-resolving a
 * base's links) run under one of these. The lease outlives the guarded step
 * many times over; a holder that dies releases it by expiry.
 */
const LEASE_MS = 30_000;
const WAIT_MS = 60_000;
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

/**
 * `waitMs`: how long to wait for the lock (a base's link pass over thousands
 * of pages can hold it for a while). The lease is renewed every third of it
 * while `fn` runs, so a long step keeps it and a dead holder still loses it.
 */
export async function withLock<T>(redis: RedisClient, name: string, fn: () => Promise<T>, opts: { waitMs?: number } = {}): Promise<T> {
  const key = `kblock:${name}`;
  const holder = randomBytes(12).toString('hex');
  const deadline = Date.now() + (opts.waitMs ?? WAIT_MS);
  let delay = 5;
  while ((await redis.set(key, holder, 'PX', LEASE_MS, 'NX')) !== 'OK') {
    if (Date.now() > deadline) throw new Error(`lock ${name} is still held after ${(opts.waitMs ?? WAIT_MS) / 1000} s`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 200);
  }
  const renew = setInterval(() => void redis.eval(RENEW, 1, key, holder, String(LEASE_MS)).catch(() => undefined), LEASE_MS / 3);
  try {
    return await fn();
  } finally {
    clearInterval(renew);
    await redis.eval(RELEASE, 1, key, holder).catch(() => undefined);
  }
}
