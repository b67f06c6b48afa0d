import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept: 1.25x by default
 * (GATEWAY_HEAP_GROWING_PERCENT, V8's `--heap-growing-percent`), where its own rule allows up to 4x on
 * a small heap. A gateway's live
 * set is small (about 60 MB) but the garbage of a burst (thousands of streams opened at once) is
 * promoted before it dies, so under the default the heap ran to about 190 MB before a full collection
 * and the RSS peak followed. bench/README.md has the figures: RSS after load and the 2,000-stream peak
 * fell, with no CPU cost measurable per request. V8 reads the factor at every collection, so setting
 * it at start (not on the command line) works under `npm start`, tsx and the container alike; a V8
 * that no longer knows the flag ignores it.
 */
export function tuneHeap(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
