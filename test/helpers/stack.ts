import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import http, { type Server } from 'node:http';
import { loadConfig, type Config } from '../../platform/config';
import { createLogger } from '../../platform/logger';
import { connectStore } from '../../capabilities/store';
import { buildDeps } from '../../capabilities/bootstrap';
import { readCatalogueFile, seedCatalogue } from '../../capabilities/catalogue/records';
import { createApp } from '../../gateway/app';
import { answerClientErrors } from '../../gateway/client-errors';
import { createSimulator, type Simulator } from '../../dev/simulator/app';
import { createMediaHandler, publicBaseUrlOf } from '../../dev/simulator/media/index';
import { createWorkers } from '../../workers/worker';
import type { ServiceDeps } from '../../capabilities/bootstrap';

/**
 * Each test file gets its own world on the shared test services (started by
 * dev/scripts/test.ts): a fresh Mongo database, a Redis key prefix and a task
 * queue, so files run in parallel without seeing each other.
 */
export function testConfig(overrides: Record<string, string> = {}): Config {
  const mongo = process.env.MONGO_URL;
  if (!mongo || !process.env.REDIS_URL) {
    throw new Error('MONGO_URL and REDIS_URL are not set: run the suite with `npm test`, which starts the services');
  }
  const suffix = randomBytes(4).toString('hex');
  const url = new URL(mongo);
  url.pathname = `/t_${suffix}`;
  return loadConfig({
    ...process.env,
    MONGO_URL: url.toString(),
    REDIS_PREFIX: `t${suffix}:`,
    TEMPORAL_TASK_QUEUE: `test-${suffix}`,
    ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`,
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    MEDIA_POLL_INTERVAL_MS: '100',
    PORT: '0',
    ...overrides,
  });
}

export interface TestGateway {
  url: string;
  /** This file's own upstream simulator (faults scripted here touch no other file). */
  sim?: Simulator;
  simUrl?: string;
  /** POST/DELETE to the simulator's control API. */
  control(method: string, path: string, body?: unknown): Promise<any>;
  config: Config;
  deps: ServiceDeps;
  server: Server;
  admin<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T }>;
  newAccount(opts?: { name?: string; enterprise?: boolean }): Promise<{ id: string; balance_usd: string }>;
  newKey(accountId: string, fields?: Record<string, unknown>): Promise<{ id: string; key: string }>;
  /**
   * Write every usage row this process holds to Mongo: those appended to the
   * ledger journal (refusals, charges' rows; drained in the background) and
   * those in the in-memory batch. A test that counts rows right after its
   * calls reads them after this, not after the batch alone.
   */
  flushRows(): Promise<void>;
  close(): Promise<void>;
}

export async function startGateway(
  overrides: Record<string, string> = {},
  opts: { simulator?: boolean; mediaDelayMs?: number; worker?: boolean } = {},
): Promise<TestGateway> {
  let sim: Simulator | undefined;
  let simUrl: string | undefined;
  if (opts.simulator) {
    const media = createMediaHandler({ baseDelayMs: opts.mediaDelayMs ?? 0 });
    sim = createSimulator({ extraHandlers: [(req, res, ctx) => media.handle(req, res, { ...ctx, publicBaseUrl: publicBaseUrlOf(req) })] });
    simUrl = await sim.listen(0, '127.0.0.1');
    overrides = { SIMULATOR_URL: simUrl, ...overrides };
  }
  // Listening first, so the gateway's PUBLIC_BASE_URL (every absolute URL it hands out) is its real address.
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  server.listen(0, '127.0.0.1');
  answerClientErrors(server);
  // As gateway/server.ts: idle keep-alive connections outlive the client's, so a reused one is never closed under it.
  server.keepAliveTimeout = 65_000;
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // GATEWAY_INTERNAL_URL: the in-process worker's batch lines call this gateway, not PORT's.
  const config = testConfig({ PUBLIC_BASE_URL: url, GATEWAY_INTERNAL_URL: url, ...overrides });
  const seedDb = await connectStore(config.MONGO_URL);
  await seedCatalogue(seedDb, readCatalogueFile(config.CATALOGUE_FILE));
  await seedDb.conn.close();
  const deps = await buildDeps(config, createLogger(config.LOG_LEVEL));
  handler = createApp(deps).callback();
  // In-process workers on this file's own task queues (one per queue: media, knowledge, webhooks), when the file needs workflows to run.
  const workers = opts.worker ? await createWorkers(config, deps) : undefined;
  void workers?.run();

  const admin: TestGateway['admin'] = async (method, path, body, headers = {}) => {
    const res = await fetch(`${url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${config.ADMIN_TOKEN}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as any };
  };

  const control = async (method: string, path: string, body?: unknown) => {
    if (!simUrl) throw new Error('started without a simulator');
    const res = await fetch(`${simUrl}/_control${path}`, {
      method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return text ? JSON.parse(text) : null;
  };

  return {
    url, config, deps, server, admin, sim, simUrl, control,
    async newAccount(opts = {}) {
      const r = await admin('POST', '/accounts', { name: opts.name ?? 'test', ...(opts.enterprise ? { enterprise: true } : {}) });
      if (r.status !== 201) throw new Error(`account not created: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async newKey(accountId, fields = {}) {
      const r = await admin('POST', `/accounts/${accountId}/keys`, { name: 'k', ...fields });
      if (r.status !== 201) throw new Error(`key not created: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async flushRows() {
      await deps.wallet.journal.flush();
      await deps.usage.flush();
    },
    async close() {
      await workers?.shutdown();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await deps.db.conn.dropDatabase().catch(() => undefined);
      await deps.close();
      await sim?.close();
    },
  };
}
