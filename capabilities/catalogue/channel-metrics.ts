import { Gauge } from 'prom-client';
import { channelBreakerStates } from './channel-health';
import type { Metrics } from '../../platform/metrics/registry';

const STATE_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

/**
 * Each channel's circuit breaker in this process (docs/channels.md), read at
 * scrape time: 0 closed, 1 half-open, 2 open. Only channels that failed here
 * at least once have a breaker; the others are closed.
 */
export function watchChannelBreakers(m: Metrics): void {
  new Gauge({
    name: 'gateway_channel_breaker_state',
    help: 'Circuit breaker of each channel in this process: 0 closed, 1 half-open, 2 open',
    labelNames: ['channel'] as const,
    registers: [m.registry],
    collect() {
      this.reset();
      for (const s of channelBreakerStates()) this.set({ channel: s.channel }, STATE_VALUE[s.state]);
    },
  });
}
