import pRetry from 'p-retry';
import type { RedisClient } from './redis';
import { withLock } from './lock';

/** Changes of one record wait this long for each other (and for Redis, through a restart). */
const CHANGE_WAIT_MS = 10_000;
/** Mongo and Redis writes of a change: about 10 s of outage. */
const WRITE_RETRY = { retries: 6, minTimeout: 100, factor: 2, maxTimeout: 2_000 } as const;
/** A change saved in Mongo whose Redis record could not be written is published again for about ten minutes. */
const REPUBLISH_RETRY = { retries: 25, minTimeout: 1_000, factor: 1.5, maxTimeout: 30_000 } as const;

/** What a record (a key, an account) gives `changeRecord`. */
export interface LockedRecord<D> {
  redis: RedisClient;
  lockKey: string;
  /** The fresh document (throws 404 when there is none). */
  read: () => Promise<D>;
  /** Saves the whole document to Mongo. */
  save: (doc: D) => Promise<unknown>;
  /** Writes the Redis record every gateway reads on each request. */
  publish: (doc: D) => Promise<unknown>;
  /** The answer when the change cannot be confirmed: 500 internal_error with Retry-After: 1. */
  busy: (cause?: unknown) => Error;
}

/**
 * One change of a record: under its lock, on the fresh document, saved to
 * Mongo then published to Redis, each retried for about 10 s, so a Redis
 * restart delays the answer instead of losing the change. If either write
 * fails the change is not acknowledged (`busy`) and what Mongo holds is
 * published again for about ten minutes, so gateways never keep judging by
 * the record this change replaced.
 */
export async function changeRecord<D>(rec: LockedRecord<D>, next: (doc: D) => D, repairing = false): Promise<D> {
  await rec.read(); // 404 before taking any lock
  const republishLater = () => {
    if (!repairing) void pRetry(() => changeRecord(rec, (doc) => doc, true), REPUBLISH_RETRY).catch(() => undefined);
  };
  return withLock(rec.redis, rec.lockKey, { waitMs: CHANGE_WAIT_MS, busy: () => rec.busy() }, async () => {
    const doc = next(await rec.read());
    await pRetry(() => rec.save(doc), WRITE_RETRY).catch((err: unknown) => {
      republishLater(); // the write may have landed, its answer lost
      throw rec.busy(err);
    });
    await pRetry(() => rec.publish(doc), WRITE_RETRY).catch((err: unknown) => {
      republishLater();
      throw rec.busy(err);
    });
    return doc;
  });
}
