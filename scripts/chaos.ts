/**
 * `npm run chaos`: the seeded chaos run (chaos/runner.ts) on services of its
 * own (or the ones named by MONGO_URL, REDIS_URL, TEMPORAL_ADDRESS), with its
 * own simulator. Prints the seed, the figures and the failed checks; exits 1
 * on any failure. The same seed replays the same traffic mix and fault schedule.
 *   CHAOS_SEED (random), CHAOS_SECONDS (600), CHAOS_CLIENTS (16),
 *   CHAOS_KILL_WORKER_S (20), CHAOS_KILL_GATEWAY_S (60),
 *   CHAOS_RESTART_REDIS_S (90), CHAOS_RESTART_STORE_S (120), CHAOS_PAUSE_UPSTREAM_S (45)
 * Redis and the store are restarted only when this script started them
 * (not when their URLs come from the environment).
 */
import fs from 'node:fs';
import path from 'node:path';
import { freePort, stopAll } from './lib/proc';
import { startServices, type Services } from './lib/services';
import { startSimulatorProcess } from '../chaos/simulator-process';
import { bundleWorkflows } from './bundle-workflows';
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
const sim = await startSimulatorProcess({ logDir: dataDir, mediaDelayMs: 300 });
const seconds_ = (name: string, fallback: number) => Number(process.env[name] ?? fallback) * 1000;

let code = 1;
try {
  const report = await runChaos({
    seed, seconds, env, simulatorUrl: sim.url,
    clients: Number(process.env.CHAOS_CLIENTS ?? 16),
    killWorkerEveryMs: seconds_('CHAOS_KILL_WORKER_S', 20),
    killGatewayEveryMs: seconds_('CHAOS_KILL_GATEWAY_S', 60),
    restartService: services ? (kind) => services!.restart(kind) : undefined,
    restartRedisEveryMs: seconds_('CHAOS_RESTART_REDIS_S', 90),
    restartStoreEveryMs: seconds_('CHAOS_RESTART_STORE_S', 120),
    pauseUpstream: (ms) => sim.pause(ms),
    pauseUpstreamEveryMs: seconds_('CHAOS_PAUSE_UPSTREAM_S', 45),
  });
  console.log(`\nchaos seed ${report.seed} (replay: CHAOS_SEED=${report.seed} CHAOS_SECONDS=${report.seconds} npm run chaos)`);
  for (const [k, v] of Object.entries(report.figures)) console.log(`  ${k.padEnd(34)} ${v}`);
  if (report.failures.length) {
    console.log('\nFAILED checks:');
    for (const f of report.failures) console.log(`  ${f}`);
  } else {
    console.log('\nall money checks hold');
    code = 0;
  }
} finally {
  await stopAll();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(code);
