import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)));

/**
 * The node flags the compiled gateway runs with (`npm start`, the container, benches and chaos): one
 * line in gateway/node-flags, which the container's shell entry point reads too. A flag written
 * `node<N:--flag` is given only to Node majors below N (`forNode`; the entry point has the same rule).
 * 16 MB semi-spaces (Node 24 sizes the young generation from the machine's memory: 2,000 open
 * streams took about 400 MB of RSS against 300). `--single-threaded-gc`, on Node 20 only: the
 * collector's work stays on the gateway's own thread instead of V8's helper threads, which V8 sizes
 * from the host's cores, not from the CPU the process may use (a pod's request, a 2-core machine
 * shared with the stores). Three gateways side by side on one stack (Node 20, 2 cores, 64 clients, 7
 * interleaved rounds, 2026-11-28): CPU per call 0.349 -> 0.298 ms non-streaming, 0.481 -> 0.426
 * streaming, throughput +5 %, sequential p50 and p99 unchanged (`--v8-pool-size=1`: 0.312 ms).
 * Pauses the same: scavenges p50 7.4 / max 27 ms against 7.0 / 23, mark-compact pauses 3-28 ms
 * against 7-27 (--trace-gc, 64 clients, 20 s). On Node 24 (the image) it doubles the peak instead
 * (64 clients for 8 s, 2026-11-29, `dev/bench/README.md` round 14): with no cap 415-463 MB against
 * 257-258, under a 512 MB cap 436-439 against 225-229 MB for no more throughput (1,883-1,969
 * against 1,919-2,108 req/s): the old generation's marking, left to the one thread, runs for seconds
 * under load while what it promotes meanwhile counts as live, so each full collection keeps 110-150
 * MB where Node 20's keeps 60. Node 22 in between (16:40, same load): 303-307 MB against 242-243 for
 * 3,047-3,470 against 3,204-3,289 req/s, so it goes without too. No heap cap here: Node sizes the old generation from the machine's
 * memory, or from a container's memory limit (about half of it: 524 MB under a 1 GiB cgroup), and a
 * cap under 2 GB also makes V8 grow the heap less between full collections, trading CPU for memory:
 * an operator's choice, GATEWAY_HEAP_MB (the chart's gateway.heapMB, passed after these flags by
 * dev/scripts/docker-entrypoint.sh; docs/operations.md has the measured trade).
 * `--no-memory-reducer` (Node 20 and 24 alike): V8's memory reducer collects the whole heap once
 * allocation has been low for about 8 s, to hand memory back, and every such collection frees the
 * maps no live object holds any more, which deoptimizes all the optimized code that embeds them: at
 * each idle 130-190 functions, Node's own hot ones among them (`runMicrotask`, `Immediate`,
 * `initAsyncResource`; `--trace-deopt`, reason "weak objects"). The first seconds of traffic after
 * an idle then run unoptimized: 64 clients after 40 s idle, the first second 1,164-1,751 req/s at
 * 0.62-0.97 ms CPU a call, the fourth 2,700-3,200 at 0.25-0.30 (2026-11-30, a scratch load, three
 * idles each); without the reducer the first second after a 40 s or 90 s idle runs at 2,615-2,779
 * req/s and 0.29-0.33 ms. `bench:chat-ab`, this flag alone (two runs of 4 rounds, each gateway idle while the
 * other is measured; its sequential loads come first after the idle): sequential added p50 x0.76 and
 * x0.83, stream first byte x0.84 and x0.82, CPU a sequential call 1.24 -> 0.68 and 0.99 -> 0.80 ms;
 * 64-client throughput (measured last, warm) x1.10 and x0.97; peak RSS 254 -> 258 and 265 -> 252 MB.
 * What it costs: memory a burst took is kept (about 195-209 -> 228 MB after those runs) until the
 * next full collection under traffic, instead of being handed back at the first idle; start-up's garbage is still handed back (`platform/heap.ts`
 * `returnStartupGarbage` collects explicitly), and the peak a pod is sized for does not change.
 */
export function gatewayNodeFlags(worktree = root, nodeMajor = currentNodeMajor()): string[] {
  return forNode(fs.readFileSync(path.join(worktree, 'gateway/node-flags'), 'utf8'), nodeMajor);
}

function currentNodeMajor(): number {
  return Number(process.versions.node.split('.')[0]);
}

/** The flags of a node-flags file for a Node major: `node<N:--flag` is kept (as `--flag`) below N only. */
export function forNode(text: string, nodeMajor: number): string[] {
  const out: string[] = [];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const m = /^node<(\d+):(.+)$/.exec(word);
    if (!m) out.push(word);
    else if (nodeMajor < Number(m[1])) out.push(m[2]);
  }
  return out;
}

/**
 * The node flags every worker process runs with (`npm run dev`, `npm run start:worker`, the container,
 * benches): one line in workers/node-flags, which the container's shell entry point reads too. Young
 * generation of 8 MB semi-spaces (Node's default is up to 16, more on Node 24): each scavenge copies at
 * most that much, so the worker's event loop stops for less (bench:ingest on the issue-22 collection,
 * 16 -> 4 MB: RSS 470 -> 400 MB at the peak, 390 -> 330 MB idle, the longest stall 107 -> 78 ms). 4 -> 8 MB
 * (2026-11-28): fewer objects promoted, so fewer old-generation collections, whose final pauses (30-45 ms
 * of a 70 MB heap) were the last stalls over 50 ms: longest stall 45-61 -> 39-43 ms, 1 -> 0 seconds of a
 * build over 50 ms, RSS 382-389 -> 402-417 MB at the peak, 330 -> 350 MB idle.
 */
export function workerNodeFlags(): string[] {
  return forNode(fs.readFileSync(path.join(root, 'workers/node-flags'), 'utf8'), currentNodeMajor());
}
