import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawnManaged, freePort, waitForPort, type Managed } from '../../scripts/lib/proc';
import { startServices, type Services } from '../../scripts/lib/services';
import { workerNodeFlags } from '../../scripts/lib/node-flags';

/** Services on free ports plus the project's processes, for benchmarks. */
export async function benchServices(
  name: string,
  opts: { metrics?: boolean } = {},
): Promise<{ services: Services; secrets: Record<string, string>; dataDir: string; metricsPorts?: { temporal: number; ferretdb: number } }> {
  const dataDir = path.resolve(`.data/bench-${name}-${Date.now()}`);
  const metricsPorts = opts.metrics ? { temporal: await freePort(), ferretdb: await freePort() } : undefined;
  const started = await startServices({
    dataDir,
    ports: { temporal: await freePort(), temporalUi: await freePort(), mongo: await freePort(), redis: await freePort() },
    portFallback: true,
    log: () => undefined,
    metricsPorts,
  });
  // Stopping also removes the run's data: a benchmark leaves nothing behind.
  const services: Services = {
    ...started,
    async stop() {
      await started.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  // Top-ups off: a production-mode gateway with them on refuses to start without Stripe keys (docs/payments.md).
  const secrets = { ADMIN_TOKEN: randomBytes(16).toString('hex'), KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'), TOPUPS_ENABLED: process.env.TOPUPS_ENABLED ?? 'false' };
  return { services, secrets, dataDir, metricsPorts };
}

export async function startProcess(name: string, script: string, env: Record<string, string>, port?: number, nodeArgs: string[] = []): Promise<Managed> {
  // A worker runs with the workers' node flags, as under `npm run dev` and in the container.
  const flags = script === 'workers/main.ts' ? workerNodeFlags() : [];
  const proc = spawnManaged({ name, cmd: process.execPath, args: [...flags, ...nodeArgs, '--import', 'tsx', script], env: { ...process.env, ...env }, logFile: path.resolve(`.data/bench-logs/${name}.log`) });
  if (port) await waitForPort(port, proc, 60_000);
  return proc;
}

export async function runOnce(script: string, env: Record<string, string>): Promise<void> {
  const proc = spawnManaged({ name: path.basename(script), cmd: process.execPath, args: ['--import', 'tsx', script], env: { ...process.env, ...env }, logFile: path.resolve('.data/bench-logs/once.log') });
  const { code } = await proc.exited;
  if (code !== 0) throw new Error(`${script} exited with ${code}`);
}
