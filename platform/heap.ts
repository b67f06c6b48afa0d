import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept
 * (GATEWAY_HEAP_GROWING_PERCENT, V8's `--heap-growing-percent`); 0 leaves V8's own rule, which
 * allows up to 4x on a small heap when the heap's cap is 2 GB or more, and less under a lower cap
 * (about 1.45x at 640 MB: GATEWAY_HEAP_MB, or a container's memory limit, from which Node sizes it). A gateway's live set is small (about 60 MB idle, 130 MB with
 * 2,000 open streams) but the garbage of a burst is promoted before it dies, so under V8's rule the
 * heap runs to about 190 MB before a full collection and the RSS follows. Measured
 * (dev/bench/README.md, round 5): at 25, RSS after load 171 against 256 MB and the 2,000-stream peak
 * about 20 MB lower, but 15-20 % more CPU per request on the balance endpoint (more full
 * collections at 4,700 requests/s): so it is an operator's choice for a memory-bound deployment,
 * not the default. V8 reads the factor at every collection, so setting it at start works under
 * `npm start`, tsx and the container alike; a V8 that no longer knows the flag ignores it.
 */
export function tuneHeap(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
