import fs from 'node:fs';
import path from 'node:path';
import { cruise, type ICruiseOptions, type IForbiddenRuleType } from 'dependency-cruiser';

/**
 * The layering of docs/architecture.md as dependency-cruiser rules over path
 * patterns, checked on every `npm test` (dev/scripts/test.ts) and by
 * `npm run check:layers`. Paths are relative to the repository root. The
 * floors, from the ground up:
 *
 *   domain/                      pure rules
 *   platform/                    connections, config, logging, metrics, tracing
 *   protocols/, providers/       wire formats and vendor adapters (over the platform's pools)
 *   capabilities/<name>/         one folder per business capability
 *   activities/, workflows/      Temporal's side of the capabilities
 *   gateway/, workers/           the two processes' composition roots
 *
 * An arrow may only point down (or sideways inside a floor), and no two
 * rooms (a top-level folder, or one capability) import each other, directly
 * or round a longer loop. A new folder needs no edit here: it is read by
 * its place in these patterns.
 */

/** Folders that ship (everything top-level except these is production code). */
const NOT_PRODUCTION = ['test', 'dev', 'docs', 'data', 'deploy', 'node_modules', 'dist'];
/** dev/ code the rules still read: the simulator must stay apart from the adapters. */
const DEV_READ = ['dev/simulator'];

const PRODUCTION = '^(?!(test|dev|docs|data|deploy)/)[^/]+/';

export const LAYER_RULES: IForbiddenRuleType[] = [
  {
    name: 'domain-is-pure',
    comment: 'domain/ is pure and workflow-safe: no I/O, no Node built-ins, nothing outside domain/ but zod, @temporalio/common and ipaddr.js (pure address parsing for the URL policy)',
    severity: 'error',
    from: { path: '^domain/' },
    to: { pathNot: '^(domain/|node_modules/(zod|@temporalio/common|ipaddr\\.js)/)' },
  },
  {
    name: 'adapters-know-no-capability',
    comment: 'protocols/ and providers/ (wire formats, vendor adapters) import the domain, the platform (pools, stores), each other and packages: no capability or process code',
    severity: 'error',
    from: { path: '^(protocols|providers)/' },
    to: { path: '^(capabilities|activities|workflows|gateway|workers)/' },
  },
  {
    name: 'platform-knows-no-capability',
    comment: 'platform/ (connections, config, logging, metrics, tracing) serves every capability and adapter and knows none of them, nor the processes',
    severity: 'error',
    from: { path: '^platform/' },
    to: { path: '^(protocols|providers|capabilities|activities|workflows|gateway|workers)/' },
  },
  {
    name: 'capabilities-know-no-process',
    comment: 'a capability is called by the gateway and the workers; it imports neither, nor HTTP code (routes, views of requests, middleware live in gateway/), nor activities',
    severity: 'error',
    from: { path: '^capabilities/' },
    to: { path: '^(gateway|workers|activities)/' },
  },
  {
    name: 'activities-know-no-gateway',
    comment: 'the worker\'s code never imports HTTP code: views both use live in their capability',
    severity: 'error',
    from: { path: '^(activities|workflows|workers)/' },
    to: { path: '^gateway/' },
  },
  {
    name: 'nothing-imports-a-process',
    comment: 'gateway/ and workers/ are the top floor (composition roots): nothing below imports them, and neither imports the other',
    severity: 'error',
    from: { path: PRODUCTION, pathNot: '^gateway/' },
    to: { path: '^gateway/' },
  },
  {
    name: 'nothing-imports-the-worker',
    comment: 'the other composition root',
    severity: 'error',
    from: { path: PRODUCTION, pathNot: '^workers/' },
    to: { path: '^workers/' },
  },
  {
    name: 'workflows-see-activities-as-types',
    comment: 'workflows import activities and providers only as types (import type), as Temporal samples do',
    severity: 'error',
    from: { path: '^workflows/' },
    to: { path: '^(activities|providers|capabilities)/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'workflows-are-deterministic',
    comment: 'workflows reach I/O only through activities: no platform, gateway, workers or protocols',
    severity: 'error',
    from: { path: '^workflows/' },
    to: { path: '^(platform|gateway|workers|protocols)/' },
  },
  {
    name: 'workflows-use-no-node-builtins',
    comment: 'workflow code runs in the deterministic sandbox: no Node built-in modules',
    severity: 'error',
    from: { path: '^workflows/' },
    to: { dependencyTypes: ['core'] },
  },
  {
    name: 'workflow-code-stays-in-the-worker',
    comment: 'the gateway starts workflows by name (domain/workflow-ids.ts) and imports workflows/ only as types: workflow code and @temporalio/workflow are the worker\'s, not loaded by every gateway',
    severity: 'error',
    from: { path: PRODUCTION, pathNot: '^(workflows|workers|activities)/' },
    to: { path: '^workflows/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'production-imports-no-dev',
    comment: 'dev/ (simulator, benches, chaos, scripts) is not production code; a stand-in for an outside service (a file or folder named stand-in or stand-ins) is the one exception: production code may name it to choose it outside production, and never mounts it there',
    severity: 'error',
    from: { path: PRODUCTION },
    to: { path: '^(dev|test)/', pathNot: '^dev/.*/stand-ins?(/|\\.ts$)' },
  },
  {
    name: 'simulator-shares-nothing-with-adapters',
    comment: 'the simulator stands in for the vendors: it shares no wire-format code with protocols/ or providers/',
    severity: 'error',
    from: { path: '^dev/simulator/' },
    to: { path: '^(protocols|providers)/' },
  },
  {
    name: 'adapters-share-nothing-with-simulator',
    comment: 'the other direction of the same rule',
    severity: 'error',
    from: { path: '^(protocols|providers)/' },
    to: { path: '^dev/simulator/' },
  },
];

/** The rule for loops between rooms, checked on the cruise's module graph (dependency-cruiser's own rules see files, not folders). */
export const ROOM_CIRCLE_RULE = 'rooms-form-no-circle';

/** A file's room: its capability under capabilities/, its top-level folder elsewhere (a file at the root of capabilities/ is the capabilities' composition). */
export function roomOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'capabilities' && parts.length > 2) return `capabilities/${parts[1]}`;
  if (parts[0] === 'dev' && parts.length > 2) return `dev/${parts[1]}`;
  return parts.length > 1 ? parts[0]! : '.';
}

/** The production folders under `baseDir` (read from disk, so a new folder is checked without an edit). */
export function layeredFolders(baseDir: string): string[] {
  const tops = fs.readdirSync(baseDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !NOT_PRODUCTION.includes(e.name))
    .map((e) => e.name);
  return [...tops, ...DEV_READ.filter((d) => fs.existsSync(path.join(baseDir, d)))].sort();
}

/** Loops between rooms (strongly connected components of more than one room), one line each. */
function roomCircles(edges: Array<[from: string, to: string, why: string]>): string[] {
  const graph = new Map<string, Map<string, string>>();
  for (const [a, b, why] of edges) {
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Map());
    if (!graph.has(b)) graph.set(b, new Map());
    if (!graph.get(a)!.has(b)) graph.get(a)!.set(b, why);
  }
  // Tarjan's strongly connected components
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)!.keys()) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) {
        const members = new Set(scc);
        const ties = scc.sort().flatMap((a) => [...graph.get(a)!].filter(([b]) => members.has(b)).map(([b, why]) => `${a} -> ${b} (${why})`));
        out.push(`${ROOM_CIRCLE_RULE}: ${scc.join(', ')}: ${ties.slice(0, 12).join('; ')}${ties.length > 12 ? `; and ${ties.length - 12} more` : ''}`);
      }
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/** Cruise `folders` under `baseDir` and return one line per broken rule (empty: the layering holds). */
export async function checkLayers(baseDir: string, folders: string[] = layeredFolders(baseDir)): Promise<string[]> {
  const options: ICruiseOptions = {
    baseDir,
    validate: true,
    ruleSet: { forbidden: LAYER_RULES },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
  };
  const result = await cruise(folders, options, { extensions: ['.ts', '.js', '.mjs', '.json'] });
  if (typeof result.output === 'string') throw new Error(`dependency-cruiser: unexpected output ${result.output.slice(0, 200)}`);
  const violations = result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
  // Loops between production rooms. Type-only imports count too (a type is a dependency of the reader),
  // except a type-only import of workflows/: starting a workflow by its function's type is Temporal's
  // client contract (the workflow's code never loads there), and the workflow's own arrows go down.
  const production = new RegExp(PRODUCTION);
  const edges: Array<[string, string, string]> = [];
  for (const m of result.output.modules) {
    if (!production.test(m.source)) continue;
    for (const d of m.dependencies) {
      if (d.coreModule || d.couldNotResolve || !production.test(d.resolved) || d.resolved.startsWith('node_modules/')) continue;
      if (d.resolved.startsWith('workflows/') && !m.source.startsWith('workflows/') && d.dependencyTypes.includes('type-only')) continue;
      edges.push([roomOf(m.source), roomOf(d.resolved), `${m.source} -> ${d.resolved}`]);
    }
  }
  return [...violations, ...roomCircles(edges)];
}
