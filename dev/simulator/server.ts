// Entry point: `tsx dev/simulator/server.ts` (npm run simulator).
// Env: SIMULATOR_PORT (8090), SIMULATOR_HOST (127.0.0.1), SIM_TTFT_MS, SIM_TOKEN_DELAY_MS,
// SIM_MEDIA_DELAY_MS (media task duration scale; 0 = done at the first poll), SIMULATOR_PUBLIC_URL (base of
// result links; unset: the address each connection arrived at).
import { createSimulator, type SimHandler } from './app';
import { createMediaHandler, publicBaseUrlOf } from './media/index';

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(JSON.stringify({ msg: 'invalid environment variable', name, value: raw }));
    process.exit(2);
  }
  return n;
}

// Extra routes (e.g. media) plug in here, one line each.
const media = createMediaHandler({ baseDelayMs: intEnv('SIM_MEDIA_DELAY_MS', 1000) });
const extraHandlers: SimHandler[] = [(req, res, ctx) => media.handle(req, res, { ...ctx, publicBaseUrl: publicBaseUrlOf(req, process.env.SIMULATOR_PUBLIC_URL) })];

const sim = createSimulator({
  ttftMs: intEnv('SIM_TTFT_MS', 0),
  tokenDelayMs: intEnv('SIM_TOKEN_DELAY_MS', 0),
  extraHandlers,
});

const url = await sim.listen(intEnv('SIMULATOR_PORT', 8090), process.env.SIMULATOR_HOST || '127.0.0.1');
console.log(JSON.stringify({ msg: 'simulator listening', url }));

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  sim.close().then(
    () => {
      console.log(JSON.stringify({ msg: 'simulator stopped', signal }));
      process.exit(0);
    },
    () => process.exit(1),
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
