import { Counter as PromCounter, type Registry } from 'prom-client';

/**
 * Process-local counters with labels, for figures an operator (and a test)
 * needs whether metrics are on or not: counted by the count functions of
 * platform/metrics/index.ts, exported at scrape time when metrics are on.
 * Cheap enough for the hot path: one Map lookup per increment.
 */
export type Labels = Record<string, string>;

export class Counter {
  private readonly values = new Map<string, { labels: Labels; value: number }>();

  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[]) {}

  inc(labels: Labels = {}, by = 1): void {
    const id = JSON.stringify(labels);
    const cur = this.values.get(id);
    if (cur) cur.value += by;
    else this.values.set(id, { labels, value: by });
  }

  get(labels: Labels = {}): number {
    return this.values.get(JSON.stringify(labels))?.value ?? 0;
  }

  snapshot(): Array<{ labels: Labels; value: number }> {
    return [...this.values.values()].map((v) => ({ labels: { ...v.labels }, value: v.value }));
  }
}

/** Every counter of the process, by name. */
export const counters = {
  /** Completed chat turns billed on the character estimate because the upstream's usage was missing, zero or too low. */
  chatUsageEstimated: new Counter(
    'gateway_chat_usage_estimated_total',
    'Completed chat turns billed on the character estimate because the upstream reported usage missing, zero or implausibly low (labels: channel, model, reason)',
    ['channel', 'model', 'reason'],
  ),
  /**
   * Chat calls run on the key's last known state while the fresh one was read (gateway/middleware/auth.ts),
   * by what the fresh state said. `refused` ones may have cost an upstream call that was stopped.
   */
  chatOptimisticAuth: new Counter(
    'gateway_chat_optimistic_auth_total',
    'Chat calls started on the key\'s last known state while its fresh state was read, by the fresh verdict (label outcome: admitted, refused; a refused one may have cost a stopped upstream call)',
    ['outcome'],
  ),
};

/**
 * The process-local counters above exported as Prometheus counters, read at
 * scrape time: no second increment on the hot path.
 */
export function exportProcessCounters(registry: Registry): void {
  for (const source of Object.values(counters)) {
    new PromCounter({
      name: source.name,
      help: source.help,
      labelNames: source.labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, value } of source.snapshot()) this.inc(labels, value);
      },
    });
  }
}
