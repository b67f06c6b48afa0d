/**
 * Compile the production entry points to plain JavaScript (dist/, not
 * committed): `npm run build`, then `npm start` (or the container's
 * `gateway` / `worker` commands) run them with plain `node`, without the
 * TypeScript loader in the process. A gateway started so uses less memory
 * and starts faster than under tsx (dev/bench/README.md has the figures); dev,
 * tests and benches keep running the sources through tsx.
 *
 * Each entry becomes one ES module with every project file inlined and every
 * package left as an import of node_modules. Files that locate data beside
 * themselves (`new URL('./lua/x.lua', import.meta.url)`, the console's
 * assets) keep finding it: in each project file `import.meta.url` is
 * rewritten to that source file's own URL, computed relative to the bundle,
 * so the tree may move as a whole (the image copies the sources beside dist/).
 *   npx tsx dev/scripts/build.ts            (writes dist/gateway.mjs, dist/worker.mjs)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const outdir = path.join(root, 'dist');

// The node flags each process runs with (gateway/node-flags, workers/node-flags).
export { gatewayNodeFlags, workerNodeFlags } from './lib/node-flags';

/** Entry point (source) -> bundle name in dist/. */
export const ENTRIES: Record<string, string> = {
  gateway: 'gateway/server.ts',
  worker: 'workers/main.ts',
  // The worker's compile threads (capabilities/knowledge/compute.ts finds it beside the worker's bundle).
  'kb-compile-thread': 'capabilities/knowledge/compile-thread.ts',
};

/** `import.meta.url` of each project file, as seen from the bundle that inlines it. */
function sourceUrls(): Plugin {
  return {
    name: 'source-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        let text = await fs.promises.readFile(args.path, 'utf8');
        if (text.includes('import.meta.url')) {
          const rel = path.relative(outdir, args.path).split(path.sep).join('/');
          text = text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`);
        }
        return { contents: text, loader: 'ts' };
      });
    },
  };
}

export async function buildAll(): Promise<string[]> {
  fs.mkdirSync(outdir, { recursive: true });
  const written: string[] = [];
  for (const [name, entry] of Object.entries(ENTRIES)) {
    const outfile = path.join(outdir, `${name}.mjs`);
    await build({
      absWorkingDir: root,
      entryPoints: [path.join(root, entry)],
      outfile,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'linked',
      legalComments: 'none',
      logLevel: 'warning',
      plugins: [sourceUrls()],
    });
    written.push(path.relative(root, outfile));
  }
  return written;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const written = await buildAll();
  console.log(`built ${written.join(', ')}`);
}
