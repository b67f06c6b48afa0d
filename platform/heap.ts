import type { Server } from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from './logger';

/**
 * How far V8 lets the old generation grow past what the last full collection kept
 * (GATEWAY_HEAP_GROWING_PERCENT, V8's `--heap-growing-percent`); 0 leaves V8's own rule, which
 * allows up to 4x on a small heap when the heap's cap is 2 GB or more, and about 1.45x under a
 * lower cap (GATEWAY_HEAP_MB, or a container's memory limit, from which Node sizes the cap).
 * Unset, `heapGrowingPercent` picks 100 (up to twice) under a cap of 2 GB or more, and V8's own
 * rule below. A gateway's live set is small (about 60 MB idle, 130 MB with 2,000 open streams) but
 * the garbage of a burst is promoted before it dies, so the factor decides how far the RSS runs
 * between full collections. Measured, two gateways side by side at 64 clients (dev/bench/README.md
 * rounds 5 and 9): 100 against V8's own rule on a large machine, peak RSS 332 -> 244-258 MB and
 * the CPU a call unchanged (x0.92, x0.96, x1.01 in three runs of 6 rounds); under a 640 MB cap on
 * both, 100 against V8's rule there, peak 197 -> 259 MB and no CPU gained (x0.98), hence not
 * under a cap; a 640 MB cap itself (about 1.45x), 333 -> 211 MB for 14 % more CPU; 25, 15-20 %
 * more CPU on the balance endpoint at 4,700 requests/s. V8 reads the factor at every collection,
 * so setting it at start works under `npm start`, tsx and the container alike; a V8 that no
 * longer knows the flag ignores it.
 */
export function tuneHeap(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/** Where V8's own growth rule turns to its largest factor (4x): a heap cap of 2 GB or more. */
const LARGE_HEAP_BYTES = 2 * 1024 ** 3;

/** The growth to set: the configured one, else 100 on a heap capped at 2 GB or more and V8's rule (0) below. */
export function heapGrowingPercent(configured: number | undefined, heapLimitBytes = v8.getHeapStatistics().heap_size_limit): number {
  if (configured !== undefined) return configured;
  return heapLimitBytes >= LARGE_HEAP_BYTES ? 100 : 0;
}

/**
 * A full collection that returns what it can to the system. V8 12 on (Node 22 on) has a "last
 * resort" collection (several passes that shrink the young generation and compact the old one);
 * older V8 ignores that option, and two regular full collections there do most of it once
 * allocation has been low for a few seconds (measured on Node 20: 158 -> 121 MB, against 130 with
 * the option's call). Reached through the `gc` of a fresh context with `--expose-gc` set at run
 * time, so the process's own global has no `gc`.
 */
export function fullCollection(v8Version = process.versions.v8): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as (options?: object) => void;
  if (Number(v8Version.split('.')[0]) >= 12) return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return () => {
    gc();
    gc();
  };
}

export interface StartupGarbageOptions {
  /** True while no request came since the last check and none is open (a stream). */
  idle: () => boolean;
  log: Logger;
  /** The first check, after start-up (allocation must have calmed for the young generation to shrink). */
  firstCheckMs?: number;
  checkEveryMs?: number;
  /** Past this with no idle check, the garbage is left to the collections traffic makes (the heap serves traffic meanwhile anyway). */
  giveUpAfterMs?: number;
  collect?: () => void;
  /** The clock (milliseconds; tests drive it). */
  now?: () => number;
  /** Told once the checks end (collected, given up or failed): what feeds `idle` can stop. */
  onDone?: () => void;
}

/**
 * Give start-up's garbage back once, as soon as the process is idle after start: loading the
 * catalogue, the routes and the stores' clients leaves the heap at about 60 MB with 45 live and the
 * young generation at its largest, and V8's memory reducer returns that only once allocation has
 * been low for a while: 16-18 s after start on Node 20 (RSS 157 -> 115 MB), and on Node 24 not
 * within 30 s (170 MB idle, two runs). One collection at the first second with no request from
 * 10 s on (earlier, start-up's allocation still counts as recent and the young generation is not
 * shrunk): Node 20 120-121 MB at 11 s (a 110-120 ms pause), Node 24 125-127 MB (a 180-220 ms
 * pause), while nothing is being served. The compiled gateway runs without the memory reducer
 * (`--no-memory-reducer` in gateway/node-flags: its collections at every idle deoptimize the hot
 * code), so there this collection is what hands start-up's garbage back. Returns the timer (tests stop it).
 */
export function returnStartupGarbage(o: StartupGarbageOptions): NodeJS.Timeout {
  const now = o.now ?? (() => performance.now());
  const started = now();
  const first = o.firstCheckMs ?? 10_000;
  const giveUp = o.giveUpAfterMs ?? 60_000;
  const end = () => {
    clearInterval(timer);
    o.onDone?.();
  };
  const timer = setInterval(() => {
    const age = now() - started;
    if (age < first) return;
    if (age > giveUp) return end();
    if (!o.idle()) return;
    end();
    const before = process.memoryUsage.rss();
    const t0 = performance.now();
    try {
      (o.collect ?? fullCollection())();
    } catch (err) {
      o.log.warn('start-up garbage not collected', { err });
      return;
    }
    const mb = (b: number) => Math.round(b / 2 ** 20);
    o.log.info('start-up garbage returned', { rssMb: mb(before), nowMb: mb(process.memoryUsage.rss()), pauseMs: Math.round(performance.now() - t0) });
  }, o.checkEveryMs ?? 1_000);
  timer.unref();
  return timer;
}

/**
 * The `idle` check of `returnStartupGarbage` for an HTTP server: true when no request arrived since
 * the last check and no response is still open (a stream begun in the first seconds is never paused
 * by the collection). One shared `close` listener a response (29 ns against the 170 of building a
 * bare `ServerResponse`), only until `stop` (the collection's checks are over): no cost after.
 */
export function serverIdle(server: Server): { idle: () => boolean; stop: () => void } {
  let served = 0;
  let open = 0;
  const closed = () => {
    open--;
  };
  const onRequest = (_req: unknown, res: NodeJS.EventEmitter) => {
    served++;
    open++;
    res.on('close', closed);
  };
  server.on('request', onRequest);
  let seen = 0;
  return {
    idle: () => {
      const quiet = served === seen && open === 0;
      seen = served;
      return quiet;
    },
    stop: () => void server.off('request', onRequest),
  };
}
