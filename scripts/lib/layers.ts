import { cruise, type ICruiseOptions, type IForbiddenRuleType } from 'dependency-cruiser';

/**
 * The layering of DESIGN.md as dependency-cruiser rules, checked on every
 * `npm test` (scripts/test.ts) and by `npm run check:layers`. Paths are
 * relative to the repository root.
 */
export const LAYER_RULES: IForbiddenRuleType[] = [
  {
    name: 'domain-is-pure',
    comment: 'domain/ is pure and workflow-safe: no I/O, no Node built-ins, nothing outside domain/ but zod, @temporalio/common and ipaddr.js (pure address parsing for the URL policy)',
    severity: 'error',
    from: { path: '^domain/' },
    to: { pathNot: '^(domain/|node_modules/(zod|@temporalio/common|ipaddr\\.js)/)' },
  },
  {
    name: 'workflows-see-activities-as-types',
    comment: 'workflows import activities and providers only as types (import type), as Temporal samples do',
    severity: 'error',
    from: { path: '^workflows/' },
    to: { path: '^(activities|providers)/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'workflows-are-deterministic',
    comment: 'workflows reach I/O only through activities: no infra, services, gateway, workers or protocols',
    severity: 'error',
    from: { path: '^workflows/' },
    to: { path: '^(infra|services|gateway|workers|protocols)/' },
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
    from: { path: '^(gateway|services|infra|webhooks|mcp|agents|knowledge|console|calllog|payments|metrics|integrations)/' },
    to: { path: '^workflows/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'services-know-no-gateway',
    comment: 'services are called by the gateway and the workers; they do not import gateway code or types',
    severity: 'error',
    from: { path: '^services/' },
    to: { path: '^gateway/' },
  },
  {
    name: 'simulator-shares-nothing-with-adapters',
    comment: 'the simulator stands in for the vendors: it shares no wire-format code with protocols/ or providers/',
    severity: 'error',
    from: { path: '^simulator/' },
    to: { path: '^(protocols|providers)/' },
  },
  {
    name: 'adapters-share-nothing-with-simulator',
    comment: 'the other direction of the same rule',
    severity: 'error',
    from: { path: '^(protocols|providers)/' },
    to: { path: '^simulator/' },
  },
];

/** The production folders the rules read (tests, scripts and benchmarks may import anything). */
export const LAYERED_FOLDERS = ['domain', 'workflows', 'activities', 'workers', 'services', 'infra', 'gateway', 'protocols', 'providers', 'simulator',
  'webhooks', 'mcp', 'agents', 'knowledge', 'console', 'calllog', 'payments', 'metrics', 'integrations'];

/** Cruise `folders` under `baseDir` and return one line per broken rule (empty: the layering holds). */
export async function checkLayers(baseDir: string, folders: string[] = LAYERED_FOLDERS): Promise<string[]> {
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
  return result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
}
