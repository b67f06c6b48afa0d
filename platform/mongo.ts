import mongoose, { type Connection, type Model, type Schema } from 'mongoose';
import type { Logger } from './logger';

/**
 * The MongoDB connection and what every store uses. Written for FerretDB v1
 * as well as MongoDB: no transactions, no TTL indexes, no change streams, and
 * no compare-and-set on updates. Atomic steps are unique-index inserts only
 * (see DESIGN.md).
 *
 * The collections belong to their capabilities: each defines its documents,
 * schemas and models in its `store.ts` (capabilities/<name>/store.ts), and
 * capabilities/store.ts gathers the models every process opens.
 */

/** Schema options of every collection: the id is ours (a string), no version key. */
export const docOptions = { versionKey: false as const, _id: false };

/** The model `name` on this connection: registered on first use, the same model after. */
export function modelOn<T>(conn: Connection, name: string, schema: Schema<T>, collection: string): Model<T> {
  return (conn.models[name] as Model<T> | undefined) ?? conn.model<T>(name, schema, collection);
}

/** What a store needs of the connection: the connection itself. */
export interface MongoConn {
  conn: Connection;
}

/** A connection (or the monitor's check) whose handshake gets no answer for this long is given up and tried again (not shorter: a heartbeat that times out interrupts the operations in flight, and a loaded dev store can be slow). */
export const CONNECT_TIMEOUT_MS = 10_000;

/** A process that starts while the store restarts waits this long for it (connection and indexes) before giving up. */
const STARTUP_WAIT_MS = 90_000;

/**
 * Mongoose builds each model's indexes in the background when the model is
 * registered and reports a failure as an 'error' event on the model; with no
 * listener that event is an uncaught exception, so a process that starts
 * while the store restarts would die. Every model gets a listener (this
 * plugin runs for every schema compiled on any connection, the models a
 * capability registers on first use included); connectMongo then builds the
 * indexes of the models it opens again until they hold.
 */
mongoose.plugin((schema) => {
  schema.on('init', (model: Model<unknown>) => {
    if (model.listenerCount('error') === 0) model.on('error', () => undefined);
  });
});

/**
 * Connect (waiting for a store that is restarting), register the models
 * `models` makes on the connection and build their indexes: the process
 * serves only once its stores' unique indexes (the atomic claims) exist.
 */
export async function connectMongo<M extends object>(url: string, models: (conn: Connection) => M, log?: Logger): Promise<M & MongoConn> {
  const deadline = Date.now() + STARTUP_WAIT_MS;
  let conn: Connection;
  for (;;) {
    // maxPoolSize in the URL wins (the chaos run keeps FerretDB's writers few); 20 otherwise.
    // connectTimeoutMS (the driver's default is 30 s) also bounds the monitor's handshake: a store restarting
    // may accept the connection before it answers, and a monitor stuck on that handshake leaves the process
    // without a store for the whole timeout while the store is back (the chaos run saw one gateway's
    // operations fail server selection for 20 s after a 1 s restart). The URL's value wins here too.
    conn = mongoose.createConnection(url, {
      serverSelectionTimeoutMS: 10_000,
      ...(/[?&]maxPoolSize=/i.test(url) ? {} : { maxPoolSize: 20 }),
      ...(/[?&]connectTimeoutMS=/i.test(url) ? {} : { connectTimeoutMS: CONNECT_TIMEOUT_MS }),
    });
    try {
      await conn.asPromise();
      break;
    } catch (err) {
      await conn.close().catch(() => undefined);
      if (Date.now() > deadline) throw err;
      log?.warn('store not reachable at start; trying again', { err });
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  if (log) watchStoreOutages(conn, log);
  const opened = models(conn);
  // Every model's indexes (unique ones are this store's only atomic claims) exist before the process serves.
  await Promise.all(Object.values(opened).filter((m): m is Model<never> => typeof m === 'function').map((m) => buildIndexes(m, deadline, log)));
  return { conn, ...opened };
}

/** The model's background index build; if it failed (the store restarted meanwhile), built again until the deadline. */
async function buildIndexes(model: Model<never>, deadline: number, log?: Logger): Promise<void> {
  try {
    await model.init();
    return;
  } catch (err) {
    log?.warn('store indexes not built; trying again', { model: model.modelName, err });
  }
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    try {
      await model.createIndexes();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
}

/**
 * One warning when the driver loses the store (a failed heartbeat) and one
 * line when it is back, with how long it was gone. Operations meanwhile wait
 * for server selection (serverSelectionTimeoutMS) and then fail on their own.
 */
function watchStoreOutages(conn: Connection, log: Logger): void {
  let downSince: number | null = null;
  conn.on('disconnected', () => {
    if (downSince !== null) return;
    downSince = Date.now();
    log.warn('store unreachable; operations wait for it, then fail');
  });
  conn.on('reconnected', () => {
    if (downSince === null) return;
    log.warn('store reachable again', { down_ms: Date.now() - downSince });
    downSince = null;
  });
  conn.on('error', (err) => log.warn('store connection error', { err }));
}

/** True for a duplicate-key error from a unique index (MongoDB and FerretDB both use 11000). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
