import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { runChaos } from '../../dev/chaos/runner';
import { startSimulatorProcess } from '../../dev/chaos/simulator-process';
import { startServices } from '../../dev/scripts/lib/services';
import { freePort, stopAll } from '../../dev/scripts/lib/proc';

/**
 * The short chaos run (about a minute): 2 gateways and 2 workers killed on a
 * seeded schedule, Redis restarted, the store SIGKILLed and restarted, the
 * upstream paused, under a seeded traffic mix (chat in four protocols, tasks
 * of four media families, key disables and spend caps) with simulator faults;
 * every task ends final and the books balance (dev/chaos/runner.ts `check`). The
 * file starts its own Redis and store (it restarts them; other files share
 * the suite's) and its own simulator process (it pauses it). The long run is
 * `npm run chaos` (README).
 */
test('short chaos run: every task final, the ledger, the projection, the usage rows and the keys agree', async (t) => {
  t.timeout(400_000);
  const dataDir = path.resolve(`.data/chaos-test-${process.pid}`);
  const services = await startServices({
    dataDir, own: ['mongo', 'redis'], portFallback: true, log: () => undefined,
    ports: { temporal: 0, temporalUi: 0, mongo: await freePort(), redis: await freePort() },
  });
  const sim = await startSimulatorProcess({ logDir: dataDir, mediaDelayMs: 200 });
  const seed = Number(process.env.CHAOS_SEED ?? 20261123);
  try {
    const report = await runChaos({
      seed, seconds: Number(process.env.CHAOS_SECONDS ?? 45), simulatorUrl: sim.url, clients: 6,
      env: { ...(services.env as unknown as Record<string, string>), ...(process.env.WORKFLOW_BUNDLE ? { WORKFLOW_BUNDLE: process.env.WORKFLOW_BUNDLE } : {}) },
      killWorkerEveryMs: 12_000, killGatewayEveryMs: 20_000,
      restartService: (kind, how) => services.restart(kind, how), restartRedisEveryMs: 20_000, restartStoreEveryMs: 24_000,
      pauseUpstream: (ms) => sim.pause(ms), pauseUpstreamEveryMs: 16_000,
      log: (l) => t.log(l),
    });
    t.log(`chaos seed ${report.seed}: ${JSON.stringify(report.figures)}`);
    t.deepEqual(report.failures, []);
    t.true(report.figures.gateway_kills >= 1 && report.figures.worker_kills >= 1, 'processes were killed');
    t.true(report.figures.redis_restarts >= 1 && report.figures.store_restarts >= 1 && report.figures.upstream_pauses >= 1, 'services were restarted and the upstream paused');
    t.true(report.figures.chat_ok > 50 && report.figures.tasks > 5, 'traffic went through');
  } finally {
    await stopAll();
    await services.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
