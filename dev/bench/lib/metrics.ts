/**
 * Counters from a Prometheus `/metrics` endpoint, summed per value of one
 * label: how a benchmark counts the requests a store or Temporal served
 * (FerretDB: `ferretdb_client_requests_total` by `command`; the Temporal
 * frontend: `service_requests` by `operation`).
 */
export async function counters(url: string, metric: string, byLabel: string, where: Record<string, string> = {}): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let text: string;
  try {
    text = await (await fetch(url)).text();
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const close = line.lastIndexOf('}');
    const labels = Object.fromEntries([...line.slice(metric.length + 1, close).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(where).some(([k, v]) => labels[k] !== v)) continue;
    const name = labels[byLabel] ?? '?';
    out.set(name, (out.get(name) ?? 0) + Number(line.slice(close + 1).trim().split(' ')[0]));
  }
  return out;
}

/** after - before, per name, divided by `units`; names that did not move are left out. */
export function delta(before: Map<string, number>, after: Map<string, number>, units: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, v] of after) {
    const d = (v - (before.get(name) ?? 0)) / units;
    if (d > 0) out.set(name, d);
  }
  return out;
}

export const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
