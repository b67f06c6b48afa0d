import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
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
 * worker's memory. Under tsx the thread runs an esbuild bundle of its sources
 * (no TypeScript loader in the thread), and its young generation is small:
 * together about 55 MB less RSS per thread.
 */
export interface Compute {
  run(task: ThreadTask, transfer?: ArrayBuffer[]): Promise<ThreadResult>;
  /** Resolves once tasks can start (the threads' entry found or bundled). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function inlineCompute(): Compute {
  return {
    async run(task) {
      const { runTask } = await import('./compile-thread');
      return runTask(task);
    },
    async ready() {},
    async close() {
      // Thread tasks that write (a build's records) opened a store client on this thread.
      const { closeThreadStores } = await import('./thread-store');
      await closeThreadStores();
    },
  };
}

/** The thread's entry: the compiled bundle beside a built worker (dist/), else the sources bundled for it here, else the TypeScript source through tsx. */
async function threadEntry(): Promise<{ filename: string; execArgv: string[] }> {
  // A bundle's import.meta.url names the source file (dev/scripts/build.ts), so the bundle is found from the entry script.
  const main = process.argv[1] ?? '';
  const built = path.join(path.dirname(main), 'kb-compile-thread.mjs');
  if (main.endsWith('.mjs') && fs.existsSync(built)) return { filename: built, execArgv: [] };
  const bundled = await bundleFromSource();
  if (bundled) return { filename: bundled, execArgv: [] };
  // Only the TypeScript loader: the parent's other flags (tracing's --import, --cpu-prof) are not the thread's business.
  return { filename: fileURLToPath(new URL('./compile-thread.ts', import.meta.url)), execArgv: ['--import', import.meta.resolve('tsx')] };
}

/**
 * Under tsx (dev, tests, benches): the thread's sources bundled into one plain module with esbuild (as
 * `npm run build` does for dist/), so the thread runs without the TypeScript loader. tsx in a worker
 * thread costs a second loader and its hooks thread: about 40 MB of the worker's RSS per compile thread.
 * esbuild's asynchronous API (its own process does the work: the synchronous one held this event loop
 * for about 115 ms at a worker's first build). Written once per content under .data/ (inside the tree,
 * so packages resolve from node_modules); null when esbuild is not there (the thread then runs the
 * sources through tsx).
 */
let bundled: Promise<string | null> | null = null;

/** One bundle per process, however many pools ask (esbuild's service is shared: two builds at once and a stop() hung the other). */
function bundleFromSource(): Promise<string | null> {
  // A bundle that has not come in a minute is given up: the thread then runs the sources through tsx.
  bundled ??= Promise.race([bundleOnce(), new Promise<null>((resolve) => setTimeout(resolve, 60_000, null).unref())]);
  return bundled;
}

async function bundleOnce(): Promise<string | null> {
  try {
    const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    const entry = fileURLToPath(new URL('./compile-thread.ts', import.meta.url));
    const root = path.resolve(path.dirname(entry), '../..');
    // No esbuild.stop() after it: the service is the process's (a build of someone else's may be under way); it idles unref'd.
    const out = (await esbuild.build({
      absWorkingDir: root, entryPoints: [entry], bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'node20',
      write: false, logLevel: 'silent', outfile: path.join(root, '.data', 'kb-compile-thread', 'thread.mjs'),
    })).outputFiles.find((f) => f.path.endsWith('.mjs'));
    if (!out) return null;
    const dir = path.join(root, '.data', 'kb-compile-thread');
    const file = path.join(dir, `${createHash('sha256').update(out.contents).digest('hex').slice(0, 16)}.mjs`);
    if (!fs.existsSync(file)) {
      await fs.promises.mkdir(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      await fs.promises.writeFile(tmp, out.contents);
      await fs.promises.rename(tmp, file);
    }
    return file;
  } catch {
    return null;
  }
}

export function threadCompute(opts: { threads?: number; heapMb?: number; nice?: number } = {}): Compute {
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  const threads = opts.threads ?? (cores <= 2 ? 1 : Math.min(4, cores - 1));
  const heapMb = opts.heapMb ?? 256;
  // Made on the first task (the entry may need bundling first); tasks wait for it.
  // The libuv threadpool is made by the first thread that uses it, and new threads inherit their maker's nice
  // value: an async fs call from this thread first, so the pool's threads are never made by a niced compile thread.
  const pool = threadEntry().then(async (entry) => (await fs.promises.access(entry.filename), entry)).then(({ filename, execArgv }) => new Piscina({
    filename, execArgv, minThreads: 0, maxThreads: threads, idleTimeout: 30_000,
    // Read by the thread at its start (compile-thread.ts): its nice value.
    workerData: { nice: opts.nice ?? 0 },
    // A young generation of 8 MB (V8's default for a thread is several times that): a compile allocates many
    // short-lived strings, and with the default the thread kept about 90 MB of RSS after one document
    // against 35 MB with this, at the same compile time (measured on the issue-22 collection).
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 8 },
  }));
  return {
    run: async (task, transfer) => (await pool).run(task, transfer ? { transferList: transfer } : undefined) as Promise<ThreadResult>,
    ready: async () => {
      await pool;
    },
    close: async () => (await pool).destroy(),
  };
}
