import { Counter, type Registry } from 'prom-client';
import { counters } from '../counters';

/**
 * The process-local counters of platform/counters.ts (written on the chat path
 * whether metrics are on or not) exported as Prometheus counters, read at
 * scrape time: no second increment on the hot path.
 */
export function exportProcessCounters(registry: Registry): void {
  for (const source of Object.values(counters)) {
    new Counter({
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
