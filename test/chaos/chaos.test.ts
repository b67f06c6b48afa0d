import test from 'ava';
import { createSimulator } from '../../simulator/app';
import { createMediaHandler, publicBaseUrlOf } from '../../simulator/media/index';
import { runChaos } from '../../chaos/runner';
import { stopAll } from '../../scripts/lib/proc';

/**
 * The short chaos run (about a minute): 2 gateways and 2 workers killed on a
 * seeded schedule under a seeded traffic mix with simulator faults; every
 * task ends final and the books balance (chaos/runner.ts `check`). The long
 * run is `npm run chaos` (README).
 */
test('short chaos run: every task final, the ledger, the projection, the usage rows and the keys agree', async (t) => {
  t.timeout(400_000);
  const media = createMediaHandler({ baseDelayMs: 200 });
  const sim = createSimulator({ extraHandlers: [(req, res, ctx) => media.handle(req, res, { ...ctx, publicBaseUrl: publicBaseUrlOf(req) })] });
  const simulatorUrl = await sim.listen(0, '127.0.0.1');
  const seed = Number(process.env.CHAOS_SEED ?? 20261123);
  try {
    const report = await runChaos({
      seed, seconds: Number(process.env.CHAOS_SECONDS ?? 45), simulatorUrl, clients: 6,
      env: { MONGO_URL: process.env.MONGO_URL!, REDIS_URL: process.env.REDIS_URL!, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!, ...(process.env.WORKFLOW_BUNDLE ? { WORKFLOW_BUNDLE: process.env.WORKFLOW_BUNDLE } : {}) },
      killWorkerEveryMs: 12_000, killGatewayEveryMs: 20_000,
      log: (l) => t.log(l),
    });
    t.log(`chaos seed ${report.seed}: ${JSON.stringify(report.figures)}`);
    t.deepEqual(report.failures, []);
    t.true(report.figures.gateway_kills >= 1 && report.figures.worker_kills >= 1, 'faults were injected');
    t.true(report.figures.chat_ok > 50 && report.figures.tasks > 5, 'traffic went through');
  } finally {
    await stopAll();
    await sim.close();
  }
});
