/** Seed the model registry into Mongo from data/catalogue.json. Idempotent; run before gateway and worker. */
import mongoose from 'mongoose';
import { loadConfigOrExit } from '../../platform/config';
import { connectStore } from '../../capabilities/store';
import { readCatalogueFile, seedCatalogue } from '../../capabilities/catalogue/records';

/** The store must answer within this (an unreachable one otherwise holds the seed for the processes' 90 s start-up wait). */
const REACH_TIMEOUT_MS = 8_000;

const config = loadConfigOrExit({ ADMIN_TOKEN: 'x'.repeat(16), KEY_ENCRYPTION_KEY: '0'.repeat(64), ...process.env }, 'npm run seed');
const catalogue = readCatalogueFile(config.CATALOGUE_FILE);
await reachable(config.MONGO_URL);
const db = await connectStore(config.MONGO_URL);
const count = await seedCatalogue(db, catalogue);
console.log(JSON.stringify({ msg: 'catalogue seeded', models: count, catalogue: config.CATALOGUE_FILE }));
await db.conn.close();

async function reachable(url: string): Promise<void> {
  const probe = mongoose.createConnection(url, { serverSelectionTimeoutMS: REACH_TIMEOUT_MS, connectTimeoutMS: REACH_TIMEOUT_MS });
  try {
    await probe.asPromise();
  } catch (err) {
    process.stderr.write(`npm run seed: the store at MONGO_URL=${redact(url)} did not answer within ${REACH_TIMEOUT_MS / 1000} s (${err instanceof Error ? err.message : String(err)})\n`);
    process.exit(1);
  } finally {
    await probe.close().catch(() => undefined);
  }
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
