import mongoose, { type Connection, type Model, type Schema } from 'mongoose';
import type { Logger } from './logger';
import { storeClientOptions } from './store-client';

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


/** A process that starts while the store restarts waits this long for it (connection and indexes) before giving up. */
const STARTUP_WAIT_MS = 90_000;

/** Per connection: whether its store reads through non-unique indexes (secondaryIndexesUsed), once connectMongo knows. */
const readsSecondary = new WeakMap<Connection, Promise<boolean>>();
/** Connections whose store reads the whole collection for every query but `{_id}` (secondaryIndexesUsed false). */
const scanning = new WeakSet<Connection>();

/**
 * Whether this connection's store answers every query but an `{_id}` lookup
 * by reading the whole collection (FerretDB v1 on SQLite): work whose cost is
 * one such read (a wallet checkpoint) is then spaced by the collection's size.
 */
export function filtersByScan(conn: Connection): boolean {
  return scanning.has(conn);
}

/** Each model's index build, started when the model is registered on a connection. */
const indexBuilds = new WeakMap<Model<never>, Promise<void>>();

/**
 * Indexes are built by this module, not by mongoose on its own: every model
 * registered on any connection (the ones connectMongo opens and those a
 * capability registers on first use) starts buildIndexes, which retries until
 * the store takes them (a process that starts while the store restarts must
 * not die of an index build) and, on a store that never reads through
 * non-unique indexes, builds only the unique ones.
 */
mongoose.set('autoIndex', false);
/**
 * No stack captured at every query's execution: mongoose keeps one (`new Error().stack`) only to
 * name where a query ran first when the same Query object is run twice, which this code never
 * does; it cost 10-25 us of CPU a query (the image task's poll and settlement, `bench:media`).
 */
mongoose.set('skipOriginalStackTraces', true);
mongoose.plugin((schema) => {
  schema.on('init', (model: Model<never>) => {
    if (model.listenerCount('error') === 0) model.on('error', () => undefined);
    // Model.init() emits 'init' on every call, buildIndexes' own included: one build per model.
    if (indexBuilds.has(model)) return;
    const deadline = Date.now() + STARTUP_WAIT_MS;
    const build = (readsSecondary.get(model.db) ?? Promise.resolve(true)).then((secondary) => buildIndexes(model, secondary, deadline));
    build.catch(() => undefined);
    indexBuilds.set(model, build);
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
    // A pool of 20 unless the URL says otherwise (platform/store-client.ts).
    conn = mongoose.createConnection(url, storeClientOptions(url, 20));
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
  let known!: (secondary: boolean) => void;
  readsSecondary.set(conn, new Promise<boolean>((resolve) => (known = resolve)));
  const opened = models(conn);
  const list = Object.values(opened).filter((m): m is Model<never> => typeof m === 'function');
  // Asked of a collection that exists (the first model's, made by init(), which builds no index here).
  const secondary = await (list[0] ? list[0].init().then(() => secondaryIndexesUsed(conn, list[0]!.collection.collectionName)) : Promise.resolve(true)).catch(() => true);
  if (!secondary) scanning.add(conn);
  known(secondary);
  // Every model's indexes (unique ones are this store's only atomic claims) exist before the process serves.
  await Promise.all(list.map((m) => indexBuilds.get(m)));
  return { conn, ...opened };
}

/**
 * Whether the store reads through non-unique indexes. MongoDB (and FerretDB
 * on PostgreSQL) do. FerretDB v1 on SQLite, the embedded default, hands only
 * an `{_id: …}` filter to SQLite and filters every other query itself over
 * the whole collection (internal/backends/sqlite/collection.go), so a
 * non-unique index there is only a cost: every insert of a call's ledger and
 * usage rows pays for it (about a fifth of the store's CPU per call,
 * dev/bench/README.md). Unique indexes are built everywhere: they are the
 * atomic claims. FerretDB's `explain` says whether its backend took a filter
 * on a plain field (`filterPushdown`): false on SQLite, true on PostgreSQL.
 */
async function secondaryIndexesUsed(conn: Connection, collection: string): Promise<boolean> {
  const info = await conn.getClient().db('admin').command({ buildInfo: 1 });
  if (typeof info.ferretdbVersion !== 'string') return true;
  const plan = await conn.getClient().db(conn.name).command({ explain: { find: collection, filter: { pushdown_probe: 'x' } } });
  return plan.filterPushdown !== false;
}

/** The model's collection and indexes (only its unique ones unless `secondary`); built again until the deadline if the store restarted meanwhile. */
async function buildIndexes(model: Model<never>, secondary: boolean, deadline: number): Promise<void> {
  // init() (the collection, once) keeps its first outcome; a retry builds the indexes, which makes the collection too.
  const indexes = async () => {
    if (secondary) return void (await model.createIndexes());
    for (const [fields, options] of model.schema.indexes()) {
      if (options?.unique) await model.collection.createIndex(fields as Record<string, 1 | -1>, options as Record<string, unknown>);
    }
  };
  try {
    await model.init();
    await indexes();
    return;
  } catch {
    // the store is restarting: again below
  }
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    try {
      await indexes();
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

export { isDuplicateKey } from './upsert';
