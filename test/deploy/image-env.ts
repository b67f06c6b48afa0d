import fs from 'node:fs';
import path from 'node:path';

/**
 * The environment the Dockerfile's final stage sets (its `ENV` lines, `KEY=VALUE` pairs, continued lines
 * joined), which every container of the image starts with before compose's or the chart's variables.
 */
export function dockerfileEnv(file = path.resolve('Dockerfile')): Record<string, string> {
  const text = fs.readFileSync(file, 'utf8').replace(/\\\n/g, ' ');
  const stages = text.split(/^FROM /m);
  const last = stages[stages.length - 1];
  const env: Record<string, string> = {};
  for (const line of last.split('\n')) {
    const m = /^ENV\s+(.*)$/.exec(line.trim());
    if (!m) continue;
    for (const [, k, v] of m[1].matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) env[k] = v.replace(/^"|"$/g, '');
  }
  return env;
}

/** A container's environment: the image's, then the given layers over it (null/undefined values dropped, as compose does for an unset pass-through). */
export function containerEnv(...layers: Array<Record<string, string | null | undefined>>): Record<string, string> {
  const env: Record<string, string> = { ...dockerfileEnv() };
  for (const layer of layers) for (const [k, v] of Object.entries(layer)) if (v !== null && v !== undefined) env[k] = v;
  return env;
}
