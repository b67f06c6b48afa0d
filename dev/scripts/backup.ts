/**
 * `npm run backup -- <dir>` / `npm run restore -- <dir>` (docs/operations.md): MongoDB or FerretDB
 * (MONGO_URL) as Extended JSON with its indexes, and this deployment's Redis keys (REDIS_URL,
 * REDIS_PREFIX) as DUMP payloads; with TEMPORAL_DB_FILE, the Temporal dev server's SQLite file too
 * (online backup; restoring it needs the dev server stopped, so restore prints the copy to make).
 * Restore replaces: it drops the database and the prefix's keys first.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfigOrExit } from '../../platform/config';
import { backupMongo, backupRedis, backupTemporalOnline, restoreMongo, restoreRedis, writeManifest, type BackupManifest } from './lib/backup';

const [mode, dir] = process.argv.slice(2);
if ((mode !== 'backup' && mode !== 'restore') || !dir) {
  process.stderr.write('usage: npm run backup -- <dir> | npm run restore -- <dir>\n');
  process.exit(2);
}
const config = loadConfigOrExit({ ADMIN_TOKEN: 'not-needed-for-backups', KEY_ENCRYPTION_KEY: '0'.repeat(64), ...process.env }, `npm run ${mode}`);
const temporalDb = process.env.TEMPORAL_DB_FILE;
if (mode === 'backup') {
  fs.mkdirSync(dir, { recursive: true });
  const manifest: BackupManifest = { created_at: new Date().toISOString() };
  manifest.mongo = await backupMongo(config.MONGO_URL, dir);
  manifest.redis = await backupRedis(config.REDIS_URL, config.REDIS_PREFIX, dir);
  if (temporalDb) {
    manifest.temporal = backupTemporalOnline(temporalDb, dir);
    if (!manifest.temporal) process.stderr.write(`the sqlite3 CLI did not back up ${temporalDb}: stop the dev server and copy the file instead\n`);
  }
  writeManifest(dir, manifest);
  console.log(JSON.stringify(manifest));
} else {
  const mongo = await restoreMongo(config.MONGO_URL, dir);
  const redisKeys = await restoreRedis(config.REDIS_URL, config.REDIS_PREFIX, dir);
  console.log(JSON.stringify({ restored: { mongo, redis_keys: redisKeys } }));
  if (fs.existsSync(path.join(dir, 'temporal.db'))) {
    console.log(`Temporal: with the dev server stopped, copy ${path.join(dir, 'temporal.db')} over its --db-filename (and delete that file's -wal and -shm), then start it.`);
  }
}
