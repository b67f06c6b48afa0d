import v8 from 'node:v8';

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
