import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, spawnManaged, waitForPort, type Managed } from '../scripts/lib/proc';

/**
 * The upstream simulator as a process of its own, so a chaos run can pause it
 * (SIGSTOP, then SIGCONT: connections stay open and nothing answers, as when
 * a vendor stalls) and so its CPU is not the runner's.
 */
export interface SimulatorProcess {
  url: string;
  managed: Managed;
  /** Freezes the simulator for `ms`, then lets it go on. */
  pause(ms: number): Promise<void>;
}

export async function startSimulatorProcess(opts: { logDir: string; mediaDelayMs: number }): Promise<SimulatorProcess> {
  const port = await freePort();
  const managed = spawnManaged({
    name: 'simulator', cmd: process.execPath, args: ['--import', 'tsx', 'dev/simulator/server.ts'],
    env: { ...process.env, SIMULATOR_PORT: String(port), SIM_MEDIA_DELAY_MS: String(opts.mediaDelayMs) },
    logFile: path.join(opts.logDir, 'simulator.log'),
  });
  await waitForPort(port, managed, 60_000);
  return {
    url: `http://127.0.0.1:${port}`,
    managed,
    async pause(ms) {
      managed.child.kill('SIGSTOP');
      try {
        await sleep(ms);
      } finally {
        managed.child.kill('SIGCONT');
      }
    },
  };
}
