/**
 * `npm run backup:verify`: the backup runbook of docs/operations.md, proven end to end. Starts a dev
 * stack of its own (FerretDB, Redis with its AOF, the Temporal dev server, the simulator, a gateway and
 * a worker), makes money move (top-ups, chat calls, async image tasks), backs the running stack up
 * (dev/scripts/lib/backup.ts: the store over the wire, Redis by DUMP, Temporal's SQLite file online),
 * wipes all three, restores them, starts the gateway and worker again and checks: every balance and
 * key as before, every task still answered and its workflow still in Temporal, and the wallet audit
 * workflow of every account at zero difference. Prints the figures; exits 1 if any check fails.
 */
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../platform/config';
import { createLogger } from '../../platform/logger';
import { connectStore } from '../../capabilities/store';
import { buildDeps } from '../../capabilities/bootstrap';
import { readCatalogueFile, seedCatalogue } from '../../capabilities/catalogue/records';
import { createApp } from '../../gateway/app';
import { drainSettlements } from '../../gateway/chat/settle';
import { createSimulator } from '../simulator/app';
import { createMediaHandler, publicBaseUrlOf } from '../simulator/media/index';
import { createWorker } from '../../workers/worker';
import { auditWalletWorkflow } from '../../workflows';
import { startServices } from './lib/services';
import { bundleWorkflows } from './bundle-workflows';
import { stopAll } from './lib/proc';
import { backupMongo, backupRedis, backupTemporalOnline, copyTemporalFile, restoreMongo, restoreRedis, wipeRedis, writeManifest, type BackupManifest } from './lib/backup';

const root = fileURLToPath(new URL('../..', import.meta.url));
process.chdir(root);
// This run owns its stack: a store, Redis or Temporal named in the environment is not touched.
for (const v of ['MONGO_URL', 'REDIS_URL', 'TEMPORAL_ADDRESS', 'REDIS_CLUSTER_NODES']) delete process.env[v];

const ACCOUNTS = 3;
const CHATS_PER_ACCOUNT = 5;
const TASKS_PER_ACCOUNT = 2;
const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
const dataDir = path.join(root, '.data', `backup-restore-${stamp}`);
const backupDir = path.join(dataDir, 'backup');
const temporalDb = path.join(dataDir, 'temporal.db');
const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  console.log(`  ${ok ? '✔' : '✘'} ${what}`);
  if (!ok) failures.push(what);
};

const services = await startServices({ dataDir, ports: { temporal: 27233, temporalUi: 28233, mongo: 47017, redis: 26379 }, portFallback: true, mongoDb: 'model_gateway', log: () => undefined });
const media = createMediaHandler({ baseDelayMs: 200 });
const sim = createSimulator({ extraHandlers: [(req, res, ctx) => media.handle(req, res, { ...ctx, publicBaseUrl: publicBaseUrlOf(req) })] });
const simUrl = await sim.listen(0, '127.0.0.1');
// The workflows bundled once, here, for both worker starts below: without WORKFLOW_BUNDLE each createWorker bundles in a
// worker thread of its own, and the second such bundle in one process crashed Node 20.20 (a segfault, no message).
const workflowBundle = await bundleWorkflows(path.join(dataDir, 'workflow-bundle.js'));
const config = loadConfig({
  ...process.env, ...services.env, SIMULATOR_URL: simUrl, PORT: '0', LOG_LEVEL: 'silent', MEDIA_POLL_INTERVAL_MS: '100', DEPLOYMENT_MODE: 'development',
  ADMIN_TOKEN: randomBytes(16).toString('hex'), KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'), WORKFLOW_BUNDLE: workflowBundle,
});

type App = {
  url: string;
  /** Every chat settlement written and the ledger journal drained to the store: the ledger holds every row so far. */
  settle(): Promise<void>;
  close(): Promise<void>;
};
async function startApp(): Promise<App> {
  const deps = await buildDeps(config, createLogger('silent'));
  const server: Server = createApp(deps).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const worker = await createWorker(config, deps);
  const running = worker.worker.run();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async settle() {
      await drainSettlements();
      await deps.wallet.journal.flush();
    },
    async close() {
      worker.worker.shutdown();
      await running.catch(() => undefined);
      await worker.connection.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await deps.close(); // drains the chat-charge journal to the ledger
    },
  };
}

async function call(app: App, method: string, url: string, auth: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${app.url}${url}`, { method, headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const admin = (app: App, method: string, url: string, body?: unknown) => call(app, method, `/admin/v1${url}`, config.ADMIN_TOKEN, body);

async function finalTask(app: App, key: string, id: string): Promise<{ status: number; body: any }> {
  for (let i = 0; i < 600; i++) {
    const r = await call(app, 'GET', `/v1/images/generations/${id}`, key);
    if (r.status !== 202) return r;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`task ${id} did not finish`);
}

type Snapshot = { balances: Record<string, string>; keyBalances: Record<string, string>; tasks: Record<string, string>; ledgerRows: number };
/**
 * Every task ended first (their settlements and refunds are ledger rows), then every chat charge drained from the
 * journal to the ledger, and only then the balances and the ledger counted: counted while a settlement or a journal
 * entry was still on its way, the rows before the backup and after the restore differed by what had drained between.
 */
async function snapshot(app: App, accounts: Array<{ id: string; key: string; tasks: string[] }>): Promise<Snapshot> {
  const s: Snapshot = { balances: {}, keyBalances: {}, tasks: {}, ledgerRows: 0 };
  for (const a of accounts) for (const t of a.tasks) s.tasks[t] = JSON.stringify((await finalTask(app, a.key, t)).body?.data?.length ?? null);
  await app.settle();
  for (const a of accounts) {
    s.balances[a.id] = (await admin(app, 'GET', `/accounts/${a.id}`)).body?.balance_usd;
    s.keyBalances[a.id] = JSON.stringify((await call(app, 'GET', '/v1/key/balance', a.key)).body);
    let cursor: string | null = null;
    do {
      const page: { status: number; body: any } = await admin(app, 'GET', `/accounts/${a.id}/ledger?limit=100${cursor ? `&before=${cursor}` : ''}`);
      s.ledgerRows += page.body.data.length;
      cursor = page.body.next_cursor;
    } while (cursor);
  }
  return s;
}

async function workflowStatus(id: string): Promise<string> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    return (await new Client({ connection }).workflow.getHandle(id).describe()).status.name;
  } catch (err) {
    return (err as Error).name === 'WorkflowNotFoundError' ? 'NOT_FOUND' : `error: ${(err as Error).message}`;
  } finally {
    await connection.close();
  }
}

const t0 = Date.now();
try {
  console.log(`backup-restore: stack in ${path.relative(root, dataDir)}`);
  const seedDb = await connectStore(config.MONGO_URL);
  await seedCatalogue(seedDb, readCatalogueFile(config.CATALOGUE_FILE));
  await seedDb.conn.close();

  // 1. Money moves ------------------------------------------------------------------------------
  let app = await startApp();
  const accounts: Array<{ id: string; key: string; tasks: string[] }> = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const acct = (await admin(app, 'POST', '/accounts', { name: `backup-${i}` })).body as { id: string };
    await admin(app, 'POST', `/accounts/${acct.id}/topups`, { amount_usd: '200', reference: `backup-topup-${i}` });
    const key = (await admin(app, 'POST', `/accounts/${acct.id}/keys`, { name: 'k' })).body.key as string;
    for (let c = 0; c < CHATS_PER_ACCOUNT; c++) {
      const r = await call(app, 'POST', '/v1/chat/completions', key, { model: 'gpt-5-mini', messages: [{ role: 'user', content: `hello ${c}` }], max_tokens: 20 });
      if (r.status !== 200) throw new Error(`chat call answered ${r.status}: ${JSON.stringify(r.body)}`);
    }
    const tasks: string[] = [];
    for (let k = 0; k < TASKS_PER_ACCOUNT; k++) {
      const r = await call(app, 'POST', '/v1/images/generations', key, { model: 'gpt-image-1', prompt: `backup ${k}`, async: true });
      if (r.status !== 200) throw new Error(`image task answered ${r.status}: ${JSON.stringify(r.body)}`);
      tasks.push(r.body.id);
    }
    accounts.push({ id: acct.id, key, tasks });
  }
  const before = await snapshot(app, accounts); // also waits for every task to end
  console.log(`  ${ACCOUNTS} accounts, ${ACCOUNTS * CHATS_PER_ACCOUNT} chat calls, ${ACCOUNTS * TASKS_PER_ACCOUNT} image tasks, ${before.ledgerRows} ledger rows`);

  // 2. Back up the running stack -------------------------------------------------------------
  const b0 = Date.now();
  fs.mkdirSync(backupDir, { recursive: true });
  const manifest: BackupManifest = { created_at: new Date().toISOString() };
  manifest.mongo = await backupMongo(config.MONGO_URL, backupDir);
  manifest.redis = await backupRedis(config.REDIS_URL, config.REDIS_PREFIX, backupDir);
  manifest.temporal = backupTemporalOnline(temporalDb, backupDir);
  if (!manifest.temporal) {
    console.log('  (no sqlite3 CLI: the Temporal dev server is stopped for the copy)');
    await services.restart('temporal', 'term', 0, async () => copyTemporalFile(temporalDb, path.join(backupDir, 'temporal.db')));
    manifest.temporal = { file: 'temporal.db', bytes: fs.statSync(path.join(backupDir, 'temporal.db')).size };
  }
  writeManifest(backupDir, manifest);
  const documents = Object.values(manifest.mongo.collections).reduce((a, b) => a + b, 0);
  console.log(`  backup: ${documents} documents in ${Object.keys(manifest.mongo.collections).length} collections, ${manifest.redis.keys} Redis keys, Temporal ${(manifest.temporal.bytes / 1024).toFixed(0)} KiB, in ${((Date.now() - b0) / 1000).toFixed(1)} s`);

  // 3. Wipe everything ------------------------------------------------------------------------
  await app.close();
  const wipeDb = await connectStore(config.MONGO_URL);
  await wipeDb.conn.dropDatabase();
  const leftAccounts = await wipeDb.Account.countDocuments({});
  await wipeDb.conn.close();
  const wipedKeys = await wipeRedis(config.REDIS_URL, config.REDIS_PREFIX);
  await services.restart('temporal', 'term', 0, async () => {
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${temporalDb}${suffix}`, { force: true });
  });
  check(leftAccounts === 0, `wiped: the store holds no account (${wipedKeys} Redis keys deleted)`);
  check((await workflowStatus(accounts[0]!.tasks[0]!)) === 'NOT_FOUND', 'wiped: Temporal has no workflow of the tasks');

  // 4. Restore --------------------------------------------------------------------------------
  const r0 = Date.now();
  const restored = await restoreMongo(config.MONGO_URL, backupDir);
  const restoredKeys = await restoreRedis(config.REDIS_URL, config.REDIS_PREFIX, backupDir);
  await services.restart('temporal', 'term', 0, async () => copyTemporalFile(path.join(backupDir, 'temporal.db'), temporalDb));
  console.log(`  restore: ${Object.values(restored).reduce((a, b) => a + b, 0)} documents, ${restoredKeys} Redis keys, Temporal file, in ${((Date.now() - r0) / 1000).toFixed(1)} s`);

  // 5. Everything as before, and the wallet audit at zero ------------------------------------
  app = await startApp();
  const after = await snapshot(app, accounts);
  check(JSON.stringify(after.balances) === JSON.stringify(before.balances), `every account's balance as before (${Object.values(after.balances).join(', ')})`);
  check(JSON.stringify(after.keyBalances) === JSON.stringify(before.keyBalances), 'every key authenticates and shows the same balance');
  check(JSON.stringify(after.tasks) === JSON.stringify(before.tasks), 'every task answers its result');
  check(after.ledgerRows === before.ledgerRows, `ledger rows as before (${after.ledgerRows})`);
  const statuses = await Promise.all(accounts.flatMap((a) => a.tasks).map(workflowStatus));
  check(statuses.every((s) => s === 'COMPLETED'), `every task's workflow is in Temporal, completed (${statuses.join(', ')})`);
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({ connection });
  let drift = 0;
  for (const a of accounts) {
    const result = await client.workflow.execute(auditWalletWorkflow, { taskQueue: config.TEMPORAL_TASK_QUEUE, workflowId: `backup-audit-${a.id}-${stamp}`, args: [{ accountId: a.id, repair: false }] });
    drift += Math.abs(result.driftNano);
  }
  await connection.close();
  check(drift === 0, `wallet audit of every account: difference ${drift} nanos`);
  await app.close();
} catch (err) {
  failures.push(String(err instanceof Error ? err.stack : err));
  console.error(err);
} finally {
  await sim.close();
  await services.stop();
  await stopAll();
}
console.log(`backup-restore: ${failures.length === 0 ? 'passed' : `${failures.length} check(s) failed`} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
if (failures.length === 0) fs.rmSync(dataDir, { recursive: true, force: true });
else console.log(`data kept in ${path.relative(root, dataDir)}`);
process.exit(failures.length === 0 ? 0 : 1);
