// `npm test`: build/reuse the tools, start a throw-away stack on test ports,
// start the simulator, typecheck, run ava against the stack, stop everything,
// and close on `N passed, N failed[, N skipped]`. Extra arguments go to ava
// (e.g. `npm test -- test/stack/stack.test.ts`).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pickPort, spawnManaged, stopAll, tailFile, waitForPort } from './lib/proc';
import { startServices, startStripeMock, type Services } from './lib/services';
import { failureRecap, summaryLine, TapReporter, type TapCounts, type TapFailure } from './lib/tap';
import { ensureChromium, ensureTools } from './lib/tools';
import { ensureCompose, ensureHelm, ensureKubernetesValidate } from './lib/tools';
import { checkLayers } from './lib/layers';
import { bundleWorkflows } from './bundle-workflows';
import { startRedisCluster, type RedisCluster } from './lib/redis-cluster';

const root = fileURLToPath(new URL('../..', import.meta.url));
process.chdir(root);

const TEST_PORTS = { temporal: 17233, temporalUi: 18233, mongo: 37017, redis: 16379 };
const SIMULATOR_PORT = 18090;
/** stripe-mock for the payments tests (test/payments/): they point STRIPE_API_URL at STRIPE_MOCK_URL. */
const STRIPE_MOCK_PORT = 12111;
const KEEP_FAILED_RUNS = 3;
/**
 * Files that run a second time against a local 3-node Redis Cluster (every
 * wallet, auth and limiter script must work there: one hash slot per account;
 * the dedupe file covers the load script too, the 100,000-row checkpoint file
 * runs once, its Redis part being the same; the agent escrow and sign-in files
 * cover keys of several slots read per request).
 * REDIS_CLUSTER_TESTS=0 skips that second run.
 */
const CLUSTER_SUITE = ['test/foundation/wallet.test.ts', 'test/foundation/auth.test.ts', 'test/foundation/rate-limit.test.ts', 'test/wallet/dedupe.test.ts',
  // agent calls (runtime reads, escrow flights) and the console's sign-in counters
  'test/agents/escrow.test.ts', 'test/console/sign-in-limits.test.ts'];

/** The short chaos run (test/chaos/chaos.test.ts header), run on its own by the whole suite. */
const CHAOS_FILE = 'test/chaos/chaos.test.ts';

const phases: Array<[string, number]> = [];
async function phase<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  console.log(`\n▶ ${name}`);
  try {
    return await fn();
  } finally {
    const s = (Date.now() - t0) / 1000;
    phases.push([name, s]);
    console.log(`  (${name}: ${s.toFixed(1)} s)`);
  }
}

const counts: TapCounts = { passed: 0, failed: 0, skipped: 0 };
const failures: TapFailure[] = [];
const started = Date.now();
const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
const dataDir = path.join(root, '.data', `test-${stamp}`);
const avaArgs = process.argv.slice(2);
const quietLog = (line: string) => console.log(line);

pruneOldRuns();
let services: Services | undefined;
let cluster: RedisCluster | undefined;
let stripeMock: { url: string; stop(): Promise<void> } | undefined;
try {
  const external = !!(process.env.MONGO_URL && process.env.REDIS_URL && process.env.TEMPORAL_ADDRESS);
  if (!external) {
    await phase('tools', () =>
      ensureTools({
        need: { temporal: !process.env.TEMPORAL_ADDRESS, ferretdb: !process.env.MONGO_URL, redis: !process.env.REDIS_URL },
        log: quietLog,
      }),
    );
  }

  // The deployment checks (test/deploy) need helm, kubernetes-validate and docker-compose: built or installed once, cached.
  const deployFiles = avaArgs.filter((a) => !a.startsWith('-'));
  const wantsDeploy = (name: string) => deployFiles.length === 0 || deployFiles.some((a) => a.replace(/\/+$/, '').endsWith('test/deploy') || a.includes(`test/deploy/${name}`));
  if (wantsDeploy('helm') || wantsDeploy('compose')) {
    await phase('deploy tools', async () => {
      if (wantsDeploy('helm')) {
        await ensureHelm(quietLog);
        await ensureKubernetesValidate(quietLog);
      }
      if (wantsDeploy('compose')) await ensureCompose(quietLog);
    });
  }

  // The console's browser tests drive Debian's chromium (installed when missing).
  const wantsBrowser = avaArgs.filter((a) => !a.startsWith('-')).length === 0 || avaArgs.some((a) => a.includes('test/console'));
  const chromium = wantsBrowser ? await phase('chromium', () => ensureChromium(quietLog)) : undefined;

  // The typecheck and the layering check need no services: run them while they start.
  const typecheck = startTypecheck();
  const layering = checkLayers(root).then((violations) => ({ violations }), (err: unknown) => ({ violations: [`the check failed: ${String(err)}`] }));

  services = await phase('services', () =>
    startServices({ dataDir, ports: TEST_PORTS, portFallback: true, mongoDb: 'model_gateway_test', log: quietLog }),
  );
  const simulatorUrl = await phase('simulator', startSimulator);
  if (!process.env.STRIPE_MOCK_URL) {
    stripeMock = await phase('stripe-mock', () => startStripeMock({ dataDir, port: STRIPE_MOCK_PORT, portFallback: true, log: quietLog }));
  }
  // One workflow bundle for every worker the tests start (each would otherwise run webpack).
  const workflowBundle = await phase('workflow bundle', () => bundleWorkflows(path.join(dataDir, 'workflow-bundle.js')));

  await phase('typecheck', async () => {
    const { ok, output } = await typecheck;
    if (output.trim()) console.log(output.trimEnd());
    if (ok) console.log('  typecheck passed');
    else {
      counts.failed++;
      failures.push({ title: 'typecheck (tsc --noEmit -p tsconfig.json)', detail: output.trimEnd().split('\n').map((l) => `      ${l}`) });
      console.log('  ✘ typecheck failed (tsc --noEmit -p tsconfig.json)');
    }
  });

  await phase('layering', async () => {
    const { violations } = await layering;
    if (violations.length === 0) console.log('  layering holds (dev/scripts/lib/layers.ts)');
    else {
      counts.failed++;
      failures.push({ title: 'layering (dev/scripts/lib/layers.ts)', detail: violations.map((v) => `      ${v}`) });
      for (const v of violations) console.log(`  ✘ ${v}`);
      console.log('  ✘ layering check failed (dev/scripts/lib/layers.ts)');
    }
  });

  const testEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...services!.env,
    ...(simulatorUrl ? { SIMULATOR_URL: simulatorUrl } : {}),
    ...(stripeMock ? { STRIPE_MOCK_URL: stripeMock.url } : {}),
    WORKFLOW_BUNDLE: workflowBundle,
    TEST_STACK: '1',
    // Task callbacks may go to receivers on loopback (docs/webhooks.md).
    DEPLOYMENT_MODE: process.env.DEPLOYMENT_MODE || 'test',
    ...(chromium ? { CHROMIUM_PATH: chromium } : {}),
  };
  const files = avaArgs.filter((a) => !a.startsWith('-'));
  const flags = avaArgs.filter((a) => a.startsWith('-'));
  // The whole suite runs the short chaos run after the rest, alone: it kills processes on a timer and
  // judges its traffic by time, which means little while three other files share two cores with it.
  const whole = files.length === 0;
  await phase('tests (ava)', () => runAva(testEnv, whole ? [...flags, 'test/**/*.test.ts', `!${CHAOS_FILE}`] : avaArgs));
  if (whole) await phase('chaos run (ava, alone)', () => runAva(testEnv, [...flags, CHAOS_FILE]));
  const onCluster = files.length === 0 ? CLUSTER_SUITE : CLUSTER_SUITE.filter((c) => files.some((f) => c.startsWith(f.replace(/^\.\//, ''))));
  if (onCluster.length > 0 && process.env.REDIS_CLUSTER_TESTS !== '0' && !process.env.REDIS_CLUSTER_NODES) {
    cluster = await phase('redis cluster', () => startRedisCluster({ dataDir, log: quietLog }));
    await phase('tests on the redis cluster (ava)', () => runAva({ ...testEnv, REDIS_CLUSTER_NODES: cluster!.nodes }, [...flags, ...onCluster]));
  }
} catch (err) {
  counts.failed++;
  const text = err instanceof Error ? err.stack ?? err.message : String(err);
  failures.push({ title: 'the test run itself', detail: text.split('\n').map((l) => `      ${l}`) });
  console.error(`\n✘ ${text}`);
} finally {
  await phase('stop', async () => {
    await services?.stop();
    await cluster?.stop();
    await stripeMock?.stop();
    await stopAll();
  });
}

console.log(`\nphases: ${phases.map(([n, s]) => `${n} ${s.toFixed(1)} s`).join(', ')}; total ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (counts.failed === 0) fs.rmSync(dataDir, { recursive: true, force: true });
else console.log(`service logs kept in ${path.relative(root, dataDir)}/logs`);
for (const line of failureRecap(failures)) console.log(line);
console.log(summaryLine(counts));
process.exit(counts.failed > 0 ? 1 : 0);

// ---------------------------------------------------------------------------

function startTypecheck(): Promise<{ ok: boolean; output: string }> {
  const t = spawnManaged({ name: 'tsc', cmd: bin('tsc'), args: ['--noEmit', '-p', 'tsconfig.json', '--pretty', 'false'], pipe: true });
  let output = '';
  t.child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  t.child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return t.exited.then(({ code }) => ({ ok: code === 0, output }));
}

async function startSimulator(): Promise<string | undefined> {
  if (process.env.SIMULATOR_URL) {
    console.log(`  using SIMULATOR_URL=${process.env.SIMULATOR_URL}`);
    return process.env.SIMULATOR_URL;
  }
  const entry = 'dev/simulator/server.ts';
  if (!fs.existsSync(entry)) {
    console.log(`  warning: ${entry} does not exist yet; tests run without SIMULATOR_URL`);
    return undefined;
  }
  const port = await pickPort(SIMULATOR_PORT, 'simulator', true);
  const logFile = path.join(dataDir, 'logs', 'simulator.log');
  const sim = spawnManaged({
    name: 'simulator',
    cmd: process.execPath,
    args: ['--import', 'tsx', entry],
    env: { ...process.env, SIMULATOR_PORT: String(port) },
    logFile,
  });
  try {
    await waitForPort(port, sim, 30_000);
  } catch (err) {
    throw new Error(`${String(err instanceof Error ? err.message : err)}\n${tailFile(logFile)}`);
  }
  const url = `http://127.0.0.1:${port}`;
  console.log(`  simulator on ${url} (log: ${path.relative(root, logFile)})`);
  return url;
}

async function runAva(env: NodeJS.ProcessEnv, args: string[]): Promise<void> {
  const ava = spawnManaged({ name: 'ava', cmd: bin('ava'), args: ['--tap', ...args], env, pipe: true });
  ava.child.stderr?.pipe(process.stderr);
  const reporter = new TapReporter();
  const lines = readline.createInterface({ input: ava.child.stdout! });
  lines.on('line', (line) => reporter.line(line));
  const [{ code, signal }] = await Promise.all([ava.exited, new Promise((r) => lines.once('close', r))]);
  counts.passed += reporter.counts.passed;
  counts.failed += reporter.counts.failed;
  counts.skipped += reporter.counts.skipped;
  failures.push(...reporter.failures);
  if (code !== 0 && reporter.counts.failed === 0) {
    counts.failed++;
    failures.push({ title: `ava exited with ${signal ?? `code ${code}`} without reporting a failed test`, detail: [] });
    console.log(`  ✘ ava exited with ${signal ?? `code ${code}`} without reporting a failed test`);
  }
}

function bin(name: string): string {
  return path.join(root, 'node_modules', '.bin', name);
}

/** Failed runs keep their data for a look; only the newest few stay. */
function pruneOldRuns(): void {
  const dir = path.join(root, '.data');
  if (!fs.existsSync(dir)) return;
  const runs = fs
    .readdirSync(dir)
    .filter((n) => /^test-\d{8}T\d{6}Z$/.test(n))
    .sort()
    .reverse();
  for (const old of runs.slice(KEEP_FAILED_RUNS)) fs.rmSync(path.join(dir, old), { recursive: true, force: true });
}
