/**
 * `npm run chaos`: the seeded chaos run (dev/chaos/runner.ts) on services of its
 * own (or the ones named by MONGO_URL, REDIS_URL, TEMPORAL_ADDRESS), with its
 * own simulator. Prints the seed, the figures and the failed checks; exits 1
 * on any failure. The same seed replays the same traffic mix and fault schedule.
 *   CHAOS_SEED (random), CHAOS_SECONDS (600), CHAOS_CLIENTS (24),
 *   CHAOS_KILL_WORKER_S (20), CHAOS_KILL_GATEWAY_S (60),
 *   CHAOS_RESTART_REDIS_S (90), CHAOS_RESTART_STORE_S (120), CHAOS_PAUSE_UPSTREAM_S (45)
 *   CHAOS_TSX=1: gateways and workers run the sources through tsx (default: the production build, dist/)
 *   CHAOS_MIN_CHAT_CALLS, CHAOS_MIN_TASKS: the volume the run must reach, by default
 *   the long run's (20,000 chat calls and 2,000 tasks in 600 s) scaled to CHAOS_SECONDS.
 * Redis and the store are restarted only when this script started them
 * (not when their URLs come from the environment).
 */
import fs from 'node:fs';
import path from 'node:path';
import { freePort, stopAll } from './lib/proc';
import { startServices, type Services } from './lib/services';
import { startSimulatorProcess } from '../chaos/simulator-process';
import { bundleWorkflows } from './bundle-workflows';
import { buildAll } from './build';
import { runChaos } from '../chaos/runner';

const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const seconds = Number(process.env.CHAOS_SECONDS ?? 600);
const dataDir = path.resolve(`.data/chaos-services-${Date.now()}`);
let env: Record<string, string>;
let services: Services | undefined;
if (process.env.MONGO_URL && process.env.REDIS_URL && process.env.TEMPORAL_ADDRESS) {
  env = { MONGO_URL: process.env.MONGO_URL, REDIS_URL: process.env.REDIS_URL, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS };
} else {
  services = await startServices({
    dataDir,
    ports: { temporal: await freePort(), temporalUi: await freePort(), mongo: await freePort(), redis: await freePort() },
    portFallback: true,
    log: () => undefined,
  });
  env = { ...(services.env as unknown as Record<string, string>) };
}
env.WORKFLOW_BUNDLE = process.env.WORKFLOW_BUNDLE ?? (await bundleWorkflows(path.join(dataDir, 'workflow-bundle.js')));
// Gateways and workers run the production build (dist/, as a deployment does), so a SIGKILLed one is
// replaced in about a second of CPU instead of tsx's several; CHAOS_TSX=1 runs the sources instead.
const compiled = process.env.CHAOS_TSX === '1' ? undefined : await buildAll().then(() => ({ gateway: 'dist/gateway.mjs', worker: 'dist/worker.mjs' }));
const sim = await startSimulatorProcess({ logDir: dataDir, mediaDelayMs: 300 });
const seconds_ = (name: string, fallback: number) => Number(process.env[name] ?? fallback) * 1000;

let code = 1;
try {
  const report = await runChaos({
    seed, seconds, env, simulatorUrl: sim.url, compiled,
    clients: Number(process.env.CHAOS_CLIENTS ?? 24),
    killWorkerEveryMs: seconds_('CHAOS_KILL_WORKER_S', 20),
    killGatewayEveryMs: seconds_('CHAOS_KILL_GATEWAY_S', 60),
    restartService: services ? (kind, how) => services!.restart(kind, how) : undefined,
    restartRedisEveryMs: seconds_('CHAOS_RESTART_REDIS_S', 90),
    restartStoreEveryMs: seconds_('CHAOS_RESTART_STORE_S', 120),
    pauseUpstream: (ms) => sim.pause(ms),
    pauseUpstreamEveryMs: seconds_('CHAOS_PAUSE_UPSTREAM_S', 45),
  });
  // The volume the long run must reach (issue 14: 20,000 chat calls and 2,000 tasks in 10 minutes), scaled.
  const minChat = Number(process.env.CHAOS_MIN_CHAT_CALLS ?? Math.ceil((20_000 * seconds) / 600));
  const minTasks = Number(process.env.CHAOS_MIN_TASKS ?? Math.ceil((2_000 * seconds) / 600));
  const checks = [
    ...report.checks.map((c) => ({ check: c.check, value: `${c.value}`, ok: c.ok })),
    { check: `at least ${minChat} chat calls`, value: `${report.figures.chat_calls}`, ok: report.figures.chat_calls >= minChat },
    { check: `at least ${minTasks} tasks`, value: `${report.figures.tasks}`, ok: report.figures.tasks >= minTasks },
  ];
  const failures = [...report.failures, ...checks.filter((c) => !c.ok && !report.checks.some((r) => r.check === c.check)).map((c) => `${c.check}: ${c.value}`)];
  console.log(`\nchaos seed ${report.seed}, ${report.seconds} s (replay: CHAOS_SEED=${report.seed} CHAOS_SECONDS=${report.seconds} npm run chaos)`);
  console.log(figureGrid(report.figures, 3));
  console.log('\n  check'.padEnd(66) + 'figure  result');
  for (const c of checks) console.log(`  ${c.check.padEnd(62)}${c.value.padStart(8)}  ${c.ok ? 'ok' : 'FAILED'}`);
  if (failures.length) {
    console.log('\nFAILED checks:');
    for (const f of failures) console.log(`  ${f}`);
  } else {
    console.log('\nevery check holds');
    code = 0;
  }
} finally {
  await stopAll();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(code);

/** The figures as a compact grid, `columns` name/value pairs a line. */
function figureGrid(figures: Record<string, number>, columns: number): string {
  const cells = Object.entries(figures).map(([k, v]) => `${k} ${String(v).padStart(Math.max(1, 44 - k.length - 2))}`);
  const lines: string[] = [];
  for (let i = 0; i < cells.length; i += columns) lines.push('  ' + cells.slice(i, i + columns).join('   '));
  return lines.join('\n');
}
