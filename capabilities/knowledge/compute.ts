import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ThreadResult, ThreadTask } from './compile-thread';

/**
 * Where a build's CPU-heavy steps run (capabilities/knowledge/compile-thread.ts):
 * `threads` is a piscina pool of worker threads, so no compile, tokenising
 * or link scan holds the event loop that runs workflow tasks, local
 * activities, heartbeats and the metrics listener; `inline` runs the same
 * code in the calling thread (tests of the compiler, the profile bench).
 *
 * The pool is small and bounded (KB_COMPILE_THREADS, default 1 on a machine
 * of 2 cores or fewer, else cores - 1, at most 4): on the 2-core reference
 * machine one thread compiles while the other core serves the worker's loop,
 * Temporal and the store. Tasks beyond the threads wait in piscina's queue.
 * A thread's heap is capped (KB_COMPILE_THREAD_MB, default 256 MB): a
 * pathological document fails its build with a reason instead of taking the
 * worker's memory.
 */
export interface Compute {
  run(task: ThreadTask, transfer?: ArrayBuffer[]): Promise<ThreadResult>;
  close(): Promise<void>;
}

export function inlineCompute(): Compute {
  return {
    async run(task) {
      const { runTask } = await import('./compile-thread');
      return runTask(task);
    },
    async close() {},
  };
}

/** The thread's entry: the compiled bundle beside a built worker (dist/), else the TypeScript source through tsx. */
function threadEntry(): { filename: string; execArgv: string[] } {
  // A bundle's import.meta.url names the source file (dev/scripts/build.ts), so the bundle is found from the entry script.
  const main = process.argv[1] ?? '';
  const built = path.join(path.dirname(main), 'kb-compile-thread.mjs');
  if (main.endsWith('.mjs') && fs.existsSync(built)) return { filename: built, execArgv: [] };
  // Only the TypeScript loader: the parent's other flags (tracing's --import, --cpu-prof) are not the thread's business.
  return { filename: fileURLToPath(new URL('./compile-thread.ts', import.meta.url)), execArgv: ['--import', import.meta.resolve('tsx')] };
}

export function threadCompute(opts: { threads?: number; heapMb?: number } = {}): Compute {
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  const threads = opts.threads ?? (cores <= 2 ? 1 : Math.min(4, cores - 1));
  const heapMb = opts.heapMb ?? 256;
  const { filename, execArgv } = threadEntry();
  const pool = new Piscina({
    filename, execArgv, minThreads: 0, maxThreads: threads, idleTimeout: 30_000,
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
  });
  return {
    run: (task, transfer) => pool.run(task, transfer ? { transferList: transfer } : undefined) as Promise<ThreadResult>,
    close: () => pool.destroy(),
  };
}
