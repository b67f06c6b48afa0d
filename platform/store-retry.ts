import mongoose from 'mongoose';
import { setTimeout as sleep } from 'node:timers/promises';

const { MongoNetworkError, MongoServerSelectionError, MongoTopologyClosedError, MongoBulkWriteError } = mongoose.mongo;

/** What a connection that died under an operation looks like when a bulk write reports it (the class is lost). */
const NETWORK_MESSAGE = /connection .* closed|ECONNRESET|ECONNREFUSED|EPIPE|socket hang up|Topology is closed/i;

/**
 * The store did not answer the operation: its connection closed or reset
 * (a restart under it), no server could be selected, the pool was cleared.
 * Not a refusal of the operation itself (a duplicate key, a validation error).
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (err instanceof MongoNetworkError || err instanceof MongoServerSelectionError || err instanceof MongoTopologyClosedError) return true;
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'MongoPoolClearedError' || name === 'MongoNetworkError' || name === 'MongoServerSelectionError') return true;
  if (err instanceof MongoBulkWriteError) return NETWORK_MESSAGE.test(err.message);
  // Mongoose holds a model's operations while its connection is down, and gives up after bufferTimeoutMS.
  if (name === 'MongooseError' && /buffering timed out/i.test((err as Error).message)) return true;
  return false;
}

export interface StoreRetry {
  /** Further tries after the first (2: three in all). */
  retries: number;
  /** Wait before the first retry; doubled each time. */
  minTimeoutMs: number;
  /** No retry starts after this long since the first try (a failed server selection alone takes 10 s). */
  budgetMs: number;
}

/** On the request path: a restarted store is back within a second; one that stays down is answered as such. */
export const REQUEST_STORE_RETRY: StoreRetry = { retries: 2, minTimeoutMs: 150, budgetMs: 12_000 };

/**
 * Runs `op` again when the store did not answer it (`isStoreUnavailable`).
 * The driver retries nothing here: retryable writes need a replica set (the
 * dev store is a standalone, MongoDB's own check), and a read is retried once
 * only inside a session. After a store restart, every operation that was in
 * flight on one of the pool's old connections fails with "connection closed"
 * although a new connection would serve it at once.
 *
 * Only for operations that are safe to send twice: reads, `$set` updates and
 * deletes by id, and inserts whose caller treats "duplicate key" as "my
 * first try was written" (a fresh id, or a holder field that says whose it is).
 */
export async function retryStore<T>(op: () => Promise<T>, policy: StoreRetry = REQUEST_STORE_RETRY): Promise<T> {
  const started = Date.now();
  let wait = policy.minTimeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (!isStoreUnavailable(err) || attempt >= policy.retries || Date.now() - started > policy.budgetMs) throw err;
    }
    await sleep(wait);
    wait *= 2;
  }
}
