/**
 * Batch throughput: the same N chat lines sent (a) as one OpenAI batch (upload, create, poll until
 * completed; the worker runs BATCH_LINE_CONCURRENCY lines at a time as live calls through the gateway)
 * and (b) as live calls from this client at the same concurrency. Prints lines per second of each and
 * the ratio batch / live, median of the rounds (interleaved, same gateway, simulator at zero latency).
 *   npm run bench:batch     (starts its own services on free ports)
 *   BENCH_LINES=1000 BENCH_CONCURRENCY=16 BENCH_ROUNDS=3
 */
import { freePort, stopAll } from '../scripts/lib/proc';
import { benchServices, runOnce, startProcess } from './lib/stack';

const LINES = Number(process.env.BENCH_LINES ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const { services, secrets } = await benchServices('batch');
const simPort = await freePort();
const gwPort = await freePort();
const base = `http://127.0.0.1:${gwPort}`;
const env = {
  ...services.env, ...secrets, LOG_LEVEL: 'warn', SIMULATOR_URL: `http://127.0.0.1:${simPort}`, TEMPORAL_TASK_QUEUE: 'bench-batch',
  GATEWAY_INTERNAL_URL: base, BATCH_LINE_CONCURRENCY: String(CONCURRENCY),
};
await startProcess('simulator', 'dev/simulator/server.ts', { ...env, SIMULATOR_PORT: String(simPort) }, simPort);
await runOnce('dev/scripts/seed.ts', env);
await startProcess('gateway', 'gateway/server.ts', { ...env, PORT: String(gwPort) }, gwPort);
await startProcess('worker', 'workers/main.ts', env);

const admin = async (path: string, body: unknown) => {
  const r = await fetch(`${base}/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await r.json()) as any;
};
const account = await admin('/accounts', { name: 'bench' });
await admin(`/accounts/${account.id}/topups`, { amount_usd: '100000' });
const key = (await admin(`/accounts/${account.id}/keys`, { name: 'bench' })).key as string;
const auth = { authorization: `Bearer ${key}` };

const body = (i: number, round: number) => ({ model: 'gpt-5.1', max_tokens: 8, messages: [{ role: 'user', content: `bench ${round} line ${i}` }] });

async function batchRound(round: number): Promise<number> {
  const jsonl = Array.from({ length: LINES }, (_, i) => JSON.stringify({ custom_id: `r${round}-${i}`, method: 'POST', url: '/v1/chat/completions', body: body(i, round) })).join('\n');
  const t0 = performance.now();
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([jsonl]), 'bench.jsonl');
  const file = (await (await fetch(`${base}/v1/files`, { method: 'POST', headers: auth, body: form })).json()) as any;
  const batch = (await (await fetch(`${base}/v1/batches`, {
    method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
  })).json()) as any;
  for (;;) {
    const b = (await (await fetch(`${base}/v1/batches/${batch.id}`, { headers: auth })).json()) as any;
    if (['completed', 'failed', 'cancelled', 'expired'].includes(b.status)) {
      if (b.request_counts.completed !== LINES) throw new Error(`batch ended ${b.status} with ${JSON.stringify(b.request_counts)}`);
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return LINES / ((performance.now() - t0) / 1000);
}

async function liveRound(round: number): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < LINES) {
      const i = next++;
      const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body(i, round)) });
      if (r.status !== 200) throw new Error(`live call ${r.status}: ${await r.text()}`);
      await r.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return LINES / ((performance.now() - t0) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  await liveRound(-1); // warm-up
  const batch: number[] = [];
  const live: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    live.push(await liveRound(r));
    batch.push(await batchRound(r));
    console.log(`round ${r + 1}: live ${live[r].toFixed(1)} lines/s, batch ${batch[r].toFixed(1)} lines/s (ratio ${(batch[r] / live[r]).toFixed(2)})`);
  }
  console.log(`batch throughput: ${LINES} lines, concurrency ${CONCURRENCY}, median of ${ROUNDS}: batch ${median(batch).toFixed(1)} lines/s, live ${median(live).toFixed(1)} lines/s, ratio ${(median(batch) / median(live)).toFixed(2)}`);
} finally {
  await stopAll();
  await services.stop();
}
