// Starts the stack's external services on 127.0.0.1 with data under dataDir:
// Temporal dev server (SQLite + web UI), FerretDB (SQLite) as the MongoDB-wire
// store, and redis-server. A service whose URL is already in the environment
// (MONGO_URL, REDIS_URL, TEMPORAL_ADDRESS) is used as is and none of its kind
// is started. Service logs go to <dataDir>/logs/, not the terminal.
import { Connection } from '@temporalio/client';
import { Redis } from 'ioredis';
import mongoose from 'mongoose';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pickPort, spawnManaged, tailFile, waitForPort, type Managed } from './proc';
import { ensureStripeMock, ensureTools } from './tools';

export const SEARCH_ATTRIBUTES = ['TaskId', 'AccountId', 'Model'] as const;
/** temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD */
const KEYWORD = 2;

export interface ServicePorts {
  temporal: number;
  temporalUi: number;
  mongo: number;
  redis: number;
}

export interface StartServicesOptions {
  dataDir: string;
  ports: ServicePorts;
  log?: (line: string) => void;
  /** If a port is taken, use a free one instead of failing (tests). */
  portFallback?: boolean;
  /** Database name put in MONGO_URL when FerretDB is started here. */
  mongoDb?: string;
  /** Prometheus `/metrics` of the services started here on these ports (benchmarks count store and Temporal calls). */
  metricsPorts?: { temporal: number; ferretdb: number };
  /** Start these even when their URL is in the environment (the chaos run restarts its own Redis and store). */
  own?: Array<'mongo' | 'redis'>;
}

export interface ServiceEnv {
  MONGO_URL: string;
  REDIS_URL: string;
  TEMPORAL_ADDRESS: string;
  /** Empty when TEMPORAL_ADDRESS came from the environment without TEMPORAL_UI_URL. */
  TEMPORAL_UI_URL: string;
}

export type RestartableService = 'redis' | 'mongo' | 'temporal';

export interface Services {
  env: ServiceEnv;
  stop(): Promise<void>;
  /**
   * Stops a service started here and starts it again on the same port and data
   * (chaos runs). `kill` sends SIGKILL (a crash); otherwise SIGTERM (a clean
   * restart: Redis writes its append-only file first). Resolves once it answers.
   */
  restart(kind: RestartableService, how?: 'term' | 'kill', downMs?: number, whileDown?: () => Promise<void>): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;

/**
 * FerretDB's SQLite URL (one database file per Mongo database, all writers of
 * a database queue on its one write lock):
 * - WAL with synchronous=NORMAL: readers never wait for the writer; durable
 *   across process crashes, fsync at checkpoints instead of every commit (only
 *   a power loss can drop the last commits). About twice the insert rate;
 *   dev/test store only.
 * - _txlock=immediate: every transaction takes the write lock at BEGIN, under
 *   the busy timeout. FerretDB v1 runs an update as a read of the collection
 *   and a write in one transaction; deferred, two concurrent updates fail with
 *   "database is locked" (SQLITE_BUSY on the lock upgrade, which the busy
 *   timeout does not cover): 4 of 400 updates by 40 writers on 5,000 documents
 *   failed that way, none with immediate (same time). FerretDB opens
 *   transactions for writes only; reads run outside them.
 * - busy_timeout 20 s (FerretDB's default is 10 s): a write queued behind a
 *   burst waits its turn instead of failing, and still answers within the
 *   20 s a Temporal activity gets.
 * FerretDB v1 on SQLite reads the whole collection for every update, replace
 * or delete, even by _id (about 10 µs a document: 100 ms an update at 10,000
 * documents); only finds and inserts use the indexes. docs/money.md (chaos run)
 * says what that means for long runs.
 */
/**
 * The embedded FerretDB's Go garbage collector runs at GOGC=400 (Go's default is 100) unless the
 * environment sets GOGC: the chat calls' rows it inserts (about 0.13 ms of its CPU a call, more than
 * the gateway's Redis) are mostly garbage made per insert. Measured on 40,000 calls' rows in the
 * drain's batches: 159 -> 130 us of FerretDB's CPU a call, its peak RSS 53 -> 85 MB
 * (GOGC=200: 139 us, 63 MB; GOGC=800: 124 us, 128 MB). SQLite's page cache, WAL checkpoint
 * interval and mmap changed nothing measurable. Dev and test store only: production runs MongoDB.
 */
const FERRETDB_ENV: NodeJS.ProcessEnv = { ...process.env, GOGC: process.env.GOGC ?? '400' };

export function ferretSqliteUrl(dir: string): string {
  const params = ['_pragma=busy_timeout(20000)', '_pragma=journal_mode(wal)', '_pragma=synchronous(normal)', '_txlock=immediate'];
  return `file:${dir}/?${params.join('&')}`;
}

/**
 * Task-queue fairness (docs/knowledge.md "Fairness"): knowledge builds carry their account as the
 * fairness key, so one account's backlog of builds does not hold another account's build behind it.
 * The dev server (CLI 1.5.1, server 1.29) has fairness behind `matching.enableFairness`; it holds
 * within one partition of a task queue, so the dev server's queues have one (its default of 4 spread
 * an account's backlog over partitions polled at random, and a second account's build waited behind
 * most of it). One partition is plenty for one dev server.
 */
const TEMPORAL_FAIRNESS = [
  'matching.enableFairness=true',
  'matching.numTaskqueueReadPartitions=1',
  'matching.numTaskqueueWritePartitions=1',
];

/** The dev server's SQLite file: see where it is started. */
export const TEMPORAL_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

export async function startServices(opts: StartServicesOptions): Promise<Services> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const dataDir = path.resolve(opts.dataDir);
  const logDir = path.join(dataDir, 'logs');
  const own = new Set(opts.own ?? []);
  const given = {
    mongo: own.has('mongo') ? '' : process.env.MONGO_URL || '',
    redis: own.has('redis') ? '' : process.env.REDIS_URL || '',
    temporal: process.env.TEMPORAL_ADDRESS || '',
  };
  const tools = await ensureTools({
    need: { temporal: !given.temporal, ferretdb: !given.mongo, redis: !given.redis },
    log,
  });
  fs.mkdirSync(logDir, { recursive: true });

  const started: Managed[] = [];
  const stop = async () => {
    await Promise.all(started.splice(0).map((m) => m.stop()));
  };
  const launch = (name: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv) => {
    const logFile = path.join(logDir, `${name}.log`);
    const m = spawnManaged({ name, cmd, args, logFile, cwd: dataDir, env });
    started.push(m);
    return m;
  };
  /** How to start each restartable service again, and how to tell it is back. */
  const relaunch = new Map<RestartableService, { current: Managed; again: () => Managed; probe: () => Promise<void> }>();
  const restart: Services['restart'] = async (kind, how = 'term', downMs = 0, whileDown) => {
    const r = relaunch.get(kind);
    if (!r) throw new Error(`${kind} was not started here, so it cannot be restarted`);
    if (how === 'kill') r.current.child.kill('SIGKILL');
    else r.current.child.kill('SIGTERM');
    await r.current.exited;
    started.splice(started.indexOf(r.current), 1);
    if (downMs) await sleep(downMs);
    if (whileDown) await whileDown(); // e.g. a backup's restore of the service's files (dev/scripts/backup-restore.ts)
    r.current = r.again();
    await waitReady(kind, r.current, r.probe);
  };

  try {
    const env: ServiceEnv = { MONGO_URL: '', REDIS_URL: '', TEMPORAL_ADDRESS: '', TEMPORAL_UI_URL: '' };
    const waits: Array<Promise<void>> = [];

    // Redis ---------------------------------------------------------------
    if (given.redis) {
      env.REDIS_URL = given.redis;
      log(`  redis: using REDIS_URL=${given.redis}`);
      waits.push(waitReady('redis', undefined, () => pingRedis(env.REDIS_URL)));
    } else {
      const port = await pickPort(opts.ports.redis, 'redis', !!opts.portFallback);
      const dir = path.join(dataDir, 'redis');
      fs.mkdirSync(dir, { recursive: true });
      const again = () => launch('redis', tools.redisServer!, [
        '--bind', '127.0.0.1',
        '--port', String(port),
        '--dir', dir,
        '--appendonly', 'yes',
        '--save', '',
        '--daemonize', 'no',
        '--protected-mode', 'yes',
      ]);
      const m = again();
      env.REDIS_URL = `redis://127.0.0.1:${port}`;
      const probe = () => pingRedis(env.REDIS_URL);
      relaunch.set('redis', { current: m, again, probe });
      waits.push(waitReady('redis', m, probe));
    }

    // FerretDB ------------------------------------------------------------
    if (given.mongo) {
      env.MONGO_URL = given.mongo;
      log(`  mongo: using MONGO_URL=${redact(given.mongo)}`);
      waits.push(waitReady('mongo', undefined, () => pingMongo(env.MONGO_URL)));
    } else {
      const port = await pickPort(opts.ports.mongo, 'ferretdb', !!opts.portFallback);
      const sqliteDir = path.join(dataDir, 'ferretdb');
      const stateDir = path.join(dataDir, 'ferretdb-state');
      fs.mkdirSync(sqliteDir, { recursive: true });
      fs.mkdirSync(stateDir, { recursive: true });
      const again = () => launch('ferretdb', tools.ferretdb!, [
        '--handler=sqlite',
        `--sqlite-url=${ferretSqliteUrl(sqliteDir)}`,
        `--listen-addr=127.0.0.1:${port}`,
        '--telemetry=disable',
        `--state-dir=${stateDir}`,
        opts.metricsPorts ? `--debug-addr=127.0.0.1:${opts.metricsPorts.ferretdb}` : '--debug-addr=-',
        '--log-level=ERROR', // WARN logs every driver's endSessions as unsupported
      ], FERRETDB_ENV);
      const m = again();
      env.MONGO_URL = `mongodb://127.0.0.1:${port}/${opts.mongoDb ?? 'model_gateway'}`;
      const probe = () => pingMongo(env.MONGO_URL);
      relaunch.set('mongo', { current: m, again, probe });
      waits.push(waitReady('ferretdb', m, probe));
    }

    // Temporal ------------------------------------------------------------
    if (given.temporal) {
      env.TEMPORAL_ADDRESS = given.temporal;
      env.TEMPORAL_UI_URL = process.env.TEMPORAL_UI_URL || '';
      log(`  temporal: using TEMPORAL_ADDRESS=${given.temporal}`);
      waits.push(
        waitReady('temporal', undefined, async () => {
          await checkTemporal(env.TEMPORAL_ADDRESS, true, log);
        }),
      );
    } else {
      const port = await pickPort(opts.ports.temporal, 'temporal', !!opts.portFallback);
      const uiPort = await pickPort(opts.ports.temporalUi, 'temporal ui', !!opts.portFallback);
      const again = () => launch('temporal', tools.temporal!, [
        'server', 'start-dev',
        '--ip', '127.0.0.1',
        '--port', String(port),
        '--ui-port', String(uiPort),
        '--db-filename', path.join(dataDir, 'temporal.db'),
        // SQLite's defaults (a rollback journal, synchronous=FULL) fsync every commit, and every workflow
        // task, timer and activity result of every workflow is a commit: the dev server's one writer then
        // waits on the disk. WAL with synchronous=NORMAL (as the store above) fsyncs at checkpoints only and
        // still survives a crash of the process (only a power loss drops the last commits); dev/test only.
        ...TEMPORAL_SQLITE_PRAGMAS.flatMap((p) => ['--sqlite-pragma', p]),
        '--namespace', 'default',
        '--log-level', 'warn',
        '--color', 'never',
        // No ~/.config lookups: the dev server's behaviour depends only on these flags.
        '--disable-config-file',
        '--disable-config-env',
        ...(opts.metricsPorts ? ['--metrics-port', String(opts.metricsPorts.temporal)] : []),
        ...SEARCH_ATTRIBUTES.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
        ...TEMPORAL_FAIRNESS.flatMap((v) => ['--dynamic-config-value', v]),
      ]);
      const m = again();
      env.TEMPORAL_ADDRESS = `127.0.0.1:${port}`;
      env.TEMPORAL_UI_URL = `http://127.0.0.1:${uiPort}`;
      const probe = () => checkTemporal(env.TEMPORAL_ADDRESS, false, log);
      relaunch.set('temporal', { current: m, again, probe });
      waits.push(waitReady('temporal', m, probe));
    }

    const t0 = Date.now();
    await Promise.all(waits);
    log(`  services ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (logs in ${path.relative(process.cwd(), logDir) || logDir})`);
    return { env, stop, restart };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Polls `probe` until it succeeds; fails early, with the log's tail, if the process exits. */
async function waitReady(name: string, proc: Managed | undefined, probe: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last: unknown;
  for (;;) {
    if (proc?.done()) {
      const { code, signal } = await proc.exited;
      throw new Error(`${name} exited during start (${signal ?? `code ${code}`}); ${proc.logFile}:\n${tailFile(proc.logFile)}`);
    }
    try {
      await probe();
      return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const where = proc ? `; ${proc.logFile}:\n${tailFile(proc.logFile)}` : '';
      throw new Error(`${name} did not answer within ${READY_TIMEOUT_MS / 1000} s: ${String(last)}${where}`);
    }
    await sleep(200);
  }
}

async function pingRedis(url: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    const pong = await redis.ping();
    if (pong !== 'PONG') throw new Error(`PING answered ${pong}`);
  } finally {
    redis.disconnect();
  }
}

async function pingMongo(url: string): Promise<void> {
  const client = new mongoose.mongo.MongoClient(url, { serverSelectionTimeoutMS: 2000, connectTimeoutMS: 2000 });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close().catch(() => {});
  }
}

/**
 * The server answers getSystemInfo, the default namespace exists, and the
 * search attributes the gateway uses are registered (registered here when
 * using an external server that lacks them).
 */
async function checkTemporal(address: string, register: boolean, log: (l: string) => void): Promise<void> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    await connection.workflowService.getSystemInfo({});
    await connection.workflowService.describeNamespace({ namespace: 'default' });
    const listed = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    const have = new Set([...Object.keys(listed.customAttributes ?? {}), ...Object.keys(listed.systemAttributes ?? {})]);
    const missing = SEARCH_ATTRIBUTES.filter((name) => !have.has(name));
    if (missing.length === 0) return;
    if (!register) throw new Error(`search attributes not registered yet: ${missing.join(', ')}`);
    log(`  temporal: registering search attributes ${missing.join(', ')}`);
    await connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
    });
    throw new Error('search attributes just registered; checking again');
  } finally {
    await connection.close().catch(() => {});
  }
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/**
 * stripe-mock (Stripe's API mock, built and cached by tools.ts) on 127.0.0.1,
 * plain HTTP: the SDK is pointed at it with STRIPE_API_URL (its HTTPS listener, unused, takes any free
 * port: its default 12112 collided between parallel runs). Stateless: it
 * answers every call from its fixtures (docs/payments.md).
 */
export async function startStripeMock(opts: { dataDir: string; port: number; portFallback?: boolean; log?: (line: string) => void }): Promise<{ url: string; stop(): Promise<void> }> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const bin = await ensureStripeMock(log);
  const port = await pickPort(opts.port, 'stripe-mock', !!opts.portFallback);
  const logDir = path.join(path.resolve(opts.dataDir), 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  // It also serves HTTPS, on 12112 unless told otherwise: a port of the system's choosing, so parallel runs never collide.
  const m = spawnManaged({ name: 'stripe-mock', cmd: bin, args: ['-http-addr', `127.0.0.1:${port}`, '-https-addr', '127.0.0.1:0'], logFile: path.join(logDir, 'stripe-mock.log') });
  try {
    await waitForPort(port, m, READY_TIMEOUT_MS);
  } catch (err) {
    await m.stop();
    throw new Error(`${String(err instanceof Error ? err.message : err)}\n${tailFile(m.logFile!)}`);
  }
  const url = `http://127.0.0.1:${port}`;
  log(`  stripe-mock on ${url}`);
  return { url, stop: () => m.stop() };
}
