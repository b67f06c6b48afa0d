import type { RedisClient } from '../../platform/redis';
import { withLock as withRedisLock } from '../../platform/lock';
import { knowledgeRedisKeys } from './store';

/** How long a step waits for the lock by default (a base's link pass over thousands of pages can hold it for a while). */
const WAIT_MS = 60_000;

/**
 * The platform lock (platform/lock.ts) under the knowledge base's key names:
 * the read-compare-write steps of the ingestion (a build's pointer flip, a
 * document's deletion, re-resolving a base's links) run under it.
 */
export function withLock<T>(redis: RedisClient, name: string, fn: () => Promise<T>, opts: { waitMs?: number } = {}): Promise<T> {
  const waitMs = opts.waitMs ?? WAIT_MS;
  return withRedisLock(redis, knowledgeRedisKeys.lock(name), { waitMs, busy: () => new Error(`lock ${name} is still held after ${waitMs / 1000} s`) }, fn);
}
