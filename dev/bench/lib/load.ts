import { Pool } from 'undici';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationMs: number;
  /** Latency = time to the first body chunk (streams: time to first token) instead of the whole response. */
  firstChunk?: boolean;
}

export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50ms: number;
  p99ms: number;
}

/** A closed-loop load: `connections` clients, each sending its next request when the last one ends. */
export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const u = new URL(opts.url);
  const pool = new Pool(u.origin, { connections: opts.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + opts.durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: opts.connections }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          const res = await pool.request({ path: u.pathname + u.search, method: opts.method ?? 'GET', headers: opts.headers, body: opts.body });
          let first = 0;
          if (opts.firstChunk) {
            for await (const _ of res.body) if (!first) first = performance.now();
          } else await res.body.dump();
          if (res.statusCode >= 400) errors++;
          latencies.push((first || performance.now()) - t0);
        } catch {
          errors++;
          latencies.push(performance.now() - t0);
        }
      }
    }),
  );
  const elapsed = performance.now() - started;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return { requests: latencies.length, errors, rps: (latencies.length / elapsed) * 1000, p50ms: pct(50), p99ms: pct(99) };
}

export function fmt(r: LoadResult): string {
  return `${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50ms.toFixed(2)} ms  p99 ${r.p99ms.toFixed(2)} ms  errors ${r.errors}`;
}
