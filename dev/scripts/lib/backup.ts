// Backups over the wire (docs/operations.md): MongoDB or FerretDB as Extended JSON with each
// collection's indexes (no mongodump needed), Redis as DUMP/RESTORE payloads of this deployment's
// keys (the wallet projection and the chat-charge journal not yet drained to the ledger), and the
// Temporal dev server's SQLite file (online with sqlite3's `.backup`). Production MongoDB/Redis/
// Temporal have their own tools (mongodump, RDB/AOF files, the database under Temporal): the
// guide says when to use which.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { Redis } from 'ioredis';
import mongoose from 'mongoose';

const { EJSON } = mongoose.mongo.BSON;
const BATCH = 1000;

export interface BackupManifest {
  created_at: string;
  mongo?: { database: string; collections: Record<string, number> };
  redis?: { prefix: string; keys: number };
  temporal?: { file: string; bytes: number };
}

async function withMongo<T>(url: string, fn: (db: mongoose.mongo.Db) => Promise<T>): Promise<T> {
  const client = new mongoose.mongo.MongoClient(url, { serverSelectionTimeoutMS: 8000 });
  await client.connect();
  try {
    return await fn(client.db());
  } finally {
    await client.close();
  }
}

/** Every collection of MONGO_URL's database: `<name>.ejson` (one canonical Extended JSON document a line) and `<name>.indexes.json`. */
export async function backupMongo(url: string, dir: string): Promise<NonNullable<BackupManifest['mongo']>> {
  const out = path.join(dir, 'mongo');
  fs.mkdirSync(out, { recursive: true });
  return withMongo(url, async (db) => {
    const collections: Record<string, number> = {};
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      if (name.startsWith('system.')) continue;
      const file = fs.createWriteStream(path.join(out, `${name}.ejson`));
      let n = 0;
      for await (const doc of db.collection(name).find({})) {
        if (!file.write(`${EJSON.stringify(doc, { relaxed: false })}\n`)) await new Promise<void>((r) => file.once('drain', () => r()));
        n++;
      }
      await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
      const indexes = (await db.collection(name).indexes()).filter((i) => i.name !== '_id_');
      fs.writeFileSync(path.join(out, `${name}.indexes.json`), JSON.stringify(indexes, null, 1));
      collections[name] = n;
    }
    return { database: db.databaseName, collections };
  });
}

/** Drops MONGO_URL's database and loads a backupMongo directory into it (indexes first: the ledger's unique op ids hold from the first row). */
export async function restoreMongo(url: string, dir: string): Promise<Record<string, number>> {
  const src = path.join(dir, 'mongo');
  return withMongo(url, async (db) => {
    await db.dropDatabase();
    const counts: Record<string, number> = {};
    for (const file of fs.readdirSync(src).filter((f) => f.endsWith('.ejson')).sort()) {
      const name = file.slice(0, -'.ejson'.length);
      const coll = db.collection(name);
      await db.createCollection(name).catch(() => undefined);
      const indexes = JSON.parse(fs.readFileSync(path.join(src, `${name}.indexes.json`), 'utf8')) as Array<Record<string, unknown> & { key: Record<string, 1 | -1>; name: string }>;
      for (const { key, name: indexName, unique, sparse, expireAfterSeconds, partialFilterExpression } of indexes) {
        await coll.createIndex(key, { name: indexName, ...(unique ? { unique: true } : {}), ...(sparse ? { sparse: true } : {}), ...(expireAfterSeconds !== undefined ? { expireAfterSeconds: expireAfterSeconds as number } : {}), ...(partialFilterExpression ? { partialFilterExpression: partialFilterExpression as Record<string, unknown> } : {}) });
      }
      let batch: mongoose.mongo.Document[] = [];
      let n = 0;
      const lines = readline.createInterface({ input: fs.createReadStream(path.join(src, file)) });
      for await (const line of lines) {
        if (!line) continue;
        batch.push(EJSON.parse(line, { relaxed: false }) as mongoose.mongo.Document);
        if (batch.length === BATCH) {
          await coll.insertMany(batch, { ordered: true });
          n += batch.length;
          batch = [];
        }
      }
      if (batch.length) await coll.insertMany(batch, { ordered: true });
      counts[name] = n + batch.length;
    }
    return counts;
  });
}

function redisClient(url: string): Redis {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  r.on('error', () => undefined);
  return r;
}

/** Every key under REDIS_PREFIX as `{key, pttl, dump}` lines (DUMP's payload, base64). */
export async function backupRedis(url: string, prefix: string, dir: string): Promise<NonNullable<BackupManifest['redis']>> {
  const redis = redisClient(url);
  await redis.connect();
  const file = fs.createWriteStream(path.join(dir, 'redis.jsonl'));
  let keys = 0;
  try {
    for await (const batch of redis.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
      for (const key of batch) {
        const [dump, pttl] = await Promise.all([redis.dumpBuffer(key), redis.pttl(key)]);
        if (!dump) continue; // expired since the scan
        file.write(`${JSON.stringify({ key, pttl: pttl > 0 ? pttl : 0, dump: dump.toString('base64') })}\n`);
        keys++;
      }
    }
  } finally {
    await new Promise((r) => file.end(r));
    redis.disconnect();
  }
  return { prefix, keys };
}

/** Deletes this deployment's keys (REDIS_PREFIX) and RESTOREs the backed-up ones. */
export async function wipeRedis(url: string, prefix: string): Promise<number> {
  const redis = redisClient(url);
  await redis.connect();
  let n = 0;
  try {
    for await (const batch of redis.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (batch.length) n += await redis.del(...batch);
    }
  } finally {
    redis.disconnect();
  }
  return n;
}

export async function restoreRedis(url: string, prefix: string, dir: string): Promise<number> {
  await wipeRedis(url, prefix);
  const redis = redisClient(url);
  await redis.connect();
  let n = 0;
  try {
    const lines = readline.createInterface({ input: fs.createReadStream(path.join(dir, 'redis.jsonl')) });
    for await (const line of lines) {
      if (!line) continue;
      const { key, pttl, dump } = JSON.parse(line) as { key: string; pttl: number; dump: string };
      await redis.restore(key, pttl, Buffer.from(dump, 'base64'), 'REPLACE');
      n++;
    }
  } finally {
    redis.disconnect();
  }
  return n;
}

/**
 * The Temporal dev server's SQLite file, copied while the server runs with sqlite3's online `.backup`
 * (a consistent snapshot; plain `cp` of a live WAL database is not). Without the sqlite3 CLI: stop the
 * server, copy the file, start it (copyTemporalFile).
 */
export function backupTemporalOnline(dbFile: string, dir: string): NonNullable<BackupManifest['temporal']> | undefined {
  const target = path.join(dir, 'temporal.db');
  const r = spawnSync('sqlite3', [dbFile, `.backup '${target.replace(/'/g, "''")}'`], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return undefined;
  return { file: 'temporal.db', bytes: fs.statSync(target).size };
}

/** With the dev server stopped: the file (its -wal/-shm folded in by the last checkpoint or copied along). */
export function copyTemporalFile(from: string, to: string): void {
  for (const suffix of ['-wal', '-shm']) fs.rmSync(`${to}${suffix}`, { force: true });
  fs.copyFileSync(from, to);
  for (const suffix of ['-wal', '-shm']) if (fs.existsSync(`${from}${suffix}`)) fs.copyFileSync(`${from}${suffix}`, `${to}${suffix}`);
}

export function writeManifest(dir: string, manifest: BackupManifest): void {
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
}
