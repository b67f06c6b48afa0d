// `npm run dev`: the whole stack on this machine. Services (Temporal + UI,
// FerretDB, Redis) with data under .data/dev, then the simulator, the seed,
// the gateway and one worker per queue (media, knowledge, webhooks), their output prefixed with their name. Creates
// or reuses a demo account and key, prints how to use them, and writes them
// to .data/dev.env. Ctrl-C stops everything it started.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pickPort, spawnManaged, stopAll, waitForPort, type Managed } from './lib/proc';
import { startServices, startStripeMock } from './lib/services';
import { ensureDemo, type Demo } from './lib/demo';
import { workerNodeFlags } from './lib/node-flags';

const root = fileURLToPath(new URL('../..', import.meta.url));
process.chdir(root);

const DEV_PORTS = { temporal: 7233, temporalUi: 8233, mongo: 27017, redis: 6379 };
const dataDir = path.join(root, '.data', 'dev');
const secretsFile = path.join(dataDir, 'secrets.env');
const devEnvFile = path.join(root, '.data', 'dev.env');

const t0 = Date.now();
const say = (line: string) => console.log(`[dev] ${line}`);

try {
  await main();
} catch (err) {
  console.error(`[dev] ✘ ${err instanceof Error ? err.message : String(err)}`);
  await stopAll();
  process.exit(1);
}

async function main(): Promise<void> {
  fs.mkdirSync(dataDir, { recursive: true });
  const secrets = loadOrCreateSecrets();

  say('starting services…');
  const services = await startServices({ dataDir, ports: DEV_PORTS, log: (l) => say(l.trim()) });
  // Ctrl-C: proc.ts stops children newest first: worker and gateway before the services.
  // stripe-mock: the Stripe SDK's target when STRIPE_SECRET_KEY is set (sk_test_123 will do); without it the console
  // pays through the stand-in checkout (docs/payments.md). Either way events are signed with STRIPE_WEBHOOK_SECRET.
  const stripeMock = process.env.STRIPE_API_URL ? undefined : await startStripeMock({ dataDir, port: Number(process.env.STRIPE_MOCK_PORT || 12111), portFallback: true, log: (l) => say(l.trim()) });

  const gatewayPort = await pickPort(Number(process.env.PORT || 8080), 'gateway', false);
  const metricsPorts = {
    gateway: await pickPort(Number(process.env.METRICS_PORT || 9464), 'gateway metrics', true),
    worker: await pickPort(Number(process.env.WORKER_METRICS_PORT || 9465), 'worker metrics', true),
  };
  // One worker process per queue (domain/task-queues.ts), each its own metrics port: media on
  // WORKER_METRICS_PORT (9465), knowledge and webhooks on the next free ones (9466, 9467).
  const workerMetricsPorts = {
    media: metricsPorts.worker,
    knowledge: await pickPort(metricsPorts.worker + 1, 'knowledge worker metrics', true),
    webhooks: await pickPort(metricsPorts.worker + 2, 'webhooks worker metrics', true),
  };
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const baseEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...services.env,
    TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE || 'default',
    ADMIN_TOKEN: secrets.ADMIN_TOKEN,
    KEY_ENCRYPTION_KEY: secrets.KEY_ENCRYPTION_KEY,
    // Task callbacks may go to a receiver on this machine (docs/webhooks.md).
    DEPLOYMENT_MODE: process.env.DEPLOYMENT_MODE || 'development',
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL || gatewayUrl,
    STRIPE_WEBHOOK_SECRET: process.env.STRIPE_WEBHOOK_SECRET || secrets.STRIPE_WEBHOOK_SECRET,
    STRIPE_API_URL: process.env.STRIPE_API_URL || stripeMock!.url,
  };

  // Simulator ------------------------------------------------------------
  if (process.env.SIMULATOR_URL) {
    baseEnv.SIMULATOR_URL = process.env.SIMULATOR_URL;
  } else if (exists('dev/simulator/server.ts', 'simulator')) {
    const port = await pickPort(Number(process.env.SIMULATOR_PORT || 8090), 'simulator', false);
    const sim = tsx('simulator', 'dev/simulator/server.ts', { ...baseEnv, SIMULATOR_PORT: String(port) });
    await waitForPort(port, sim, 30_000);
    baseEnv.SIMULATOR_URL = `http://127.0.0.1:${port}`;
  }

  // Seed (idempotent), before gateway and worker ---------------------------
  if (exists('dev/scripts/seed.ts', 'seed')) {
    const seed = tsx('seed', 'dev/scripts/seed.ts', baseEnv);
    const { code, signal } = await seed.exited;
    if (code !== 0) throw new Error(`seed failed (${signal ?? `exit ${code}`})`);
  }

  // Gateway and worker ----------------------------------------------------
  let gateway: Managed | undefined;
  if (exists('gateway/server.ts', 'gateway')) {
    gateway = tsx('gateway', 'gateway/server.ts', { ...baseEnv, PORT: String(gatewayPort), METRICS_PORT: String(metricsPorts.gateway) });
  }
  if (exists('workers/main.ts', 'worker')) {
    for (const [queue, port] of Object.entries(workerMetricsPorts)) {
      tsx(`worker-${queue}`, 'workers/main.ts', { ...baseEnv, WORKER_QUEUE: queue, METRICS_PORT: String(port) });
    }
  }

  let demo: Demo | undefined;
  if (gateway) {
    await waitHealthy(gatewayUrl, gateway);
    demo = await ensureDemo(gatewayUrl, secrets.ADMIN_TOKEN, readEnvFile(devEnvFile), say);
  }

  const out: Record<string, string> = {
    GATEWAY_URL: gateway ? gatewayUrl : '',
    TEMPORAL_UI_URL: services.env.TEMPORAL_UI_URL,
    API_KEY: demo?.key ?? '',
    ADMIN_TOKEN: secrets.ADMIN_TOKEN,
    ACCOUNT_ID: demo?.accountId ?? '',
    CONSOLE_URL: gateway ? `${gatewayUrl}/console` : '',
    DEMO_EMAIL: demo?.email ?? '',
    DEMO_PASSWORD: demo?.password ?? '',
    DEMO_USER_ID: demo?.userId ?? '',
    DEMO_ENTERPRISE_ID: demo?.enterpriseId ?? '',
    STRIPE_WEBHOOK_SECRET: baseEnv.STRIPE_WEBHOOK_SECRET!,
    STRIPE_API_URL: baseEnv.STRIPE_API_URL!,
  };
  writeEnvFile(devEnvFile, out, 0o600);

  const line = '─'.repeat(72);
  console.log(`\n${line}`);
  console.log(`  ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  console.log(`  gateway       ${out.GATEWAY_URL || '(not started: gateway/server.ts missing)'}`);
  console.log(`  console       ${out.CONSOLE_URL || '(none)'}`);
  console.log(`  demo user     ${out.DEMO_EMAIL ? `${out.DEMO_EMAIL} / ${out.DEMO_PASSWORD}  (owner of "Demo Enterprise")` : '(none)'}`);
  console.log(`  Temporal UI   ${out.TEMPORAL_UI_URL || '(external Temporal)'}`);
  console.log(`  metrics       http://127.0.0.1:${metricsPorts.gateway}/metrics (gateway), workers: ${Object.entries(workerMetricsPorts).map(([q, p]) => `:${p} (${q})`).join(', ')}`);
  console.log(`  demo API key  ${out.API_KEY || '(none)'}`);
  console.log(`  admin token   ${out.ADMIN_TOKEN}`);
  console.log(`  account id    ${out.ACCOUNT_ID || '(none)'}`);
  console.log(`  the same as KEY=value lines: ${path.relative(root, devEnvFile)}  (service logs: .data/dev/logs/)`);
  if (out.API_KEY) {
    console.log(`  try: curl -s ${out.GATEWAY_URL}/v1/models -H "Authorization: Bearer ${out.API_KEY}"`);
  }
  console.log(`  Ctrl-C stops everything.`);
  console.log(`${line}\n`);
}

// ---------------------------------------------------------------------------

function exists(file: string, what: string): boolean {
  if (fs.existsSync(path.join(root, file))) return true;
  say(`warning: ${file} does not exist yet; not starting the ${what}`);
  return false;
}

function tsx(name: string, entry: string, env: NodeJS.ProcessEnv): Managed {
  const flags = entry === 'workers/main.ts' ? workerNodeFlags() : [];
  const m = spawnManaged({ name, cmd: process.execPath, args: [...flags, '--import', 'tsx', entry], env, prefix: true });
  void m.exited.then(({ code, signal }) => {
    if (name !== 'seed' || code !== 0) say(`${name} exited (${signal ?? `code ${code}`})`);
  });
  return m;
}

interface Secrets {
  ADMIN_TOKEN: string;
  KEY_ENCRYPTION_KEY: string;
  STRIPE_WEBHOOK_SECRET: string;
}

/** Generated on the first run, then kept: stored keys stay decryptable across runs. */
function loadOrCreateSecrets(): Secrets {
  const stored = readEnvFile(secretsFile);
  const secrets: Secrets = {
    ADMIN_TOKEN: stored.ADMIN_TOKEN || randomBytes(24).toString('hex'),
    KEY_ENCRYPTION_KEY: stored.KEY_ENCRYPTION_KEY || randomBytes(32).toString('hex'),
    STRIPE_WEBHOOK_SECRET: stored.STRIPE_WEBHOOK_SECRET || `whsec_${randomBytes(24).toString('hex')}`,
  };
  if (stored.ADMIN_TOKEN !== secrets.ADMIN_TOKEN || stored.KEY_ENCRYPTION_KEY !== secrets.KEY_ENCRYPTION_KEY || stored.STRIPE_WEBHOOK_SECRET !== secrets.STRIPE_WEBHOOK_SECRET) {
    writeEnvFile(secretsFile, { ...secrets }, 0o600);
    say(`generated ADMIN_TOKEN and KEY_ENCRYPTION_KEY in ${path.relative(root, secretsFile)}`);
  }
  return secrets;
}

function readEnvFile(file: string): Record<string, string> {
  if (!fs.existsSync(file)) return {};
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) out[m[1]] = m[2].trim();
  }
  return out;
}

function writeEnvFile(file: string, values: Record<string, string>, mode: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const body = Object.entries(values)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
  fs.writeFileSync(file, `${body}\n`, { mode });
  fs.chmodSync(file, mode);
}

async function waitHealthy(url: string, gateway: Managed): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gateway.done()) throw new Error('gateway exited before answering /healthz');
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url}/healthz did not answer 200 within 60 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

