import { hostname } from 'node:os';
import { catalogueRedisKeys } from './store';
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../platform/redis';
import type { Logger } from '../../platform/logger';
import { CircuitBreaker, type AttemptVerdict, type BreakerPolicy, type BreakerSnapshot } from '../../domain/channel-breaker';
import type { LadderBreaker } from '../../domain/channel-ladder';

/** How long a process's last reported breaker state stays readable after it stopped reporting. */
const REPORT_TTL_MS = 24 * 3600 * 1000;

export interface ChannelBreakerState extends BreakerSnapshot {
  channel: string;
}

/** One process's breaker state of a channel, as reported to Redis on each transition. */
export interface ReportedBreakerState extends BreakerSnapshot {
  process: string;
  reported_at: number;
}

/** Every ChannelHealth of this process (one per built ServiceDeps), for `channelBreakerStates()`. */
const live = new Set<ChannelHealth>();

/**
 * The circuit breakers of this process, one per channel.
 *
 * Decisions are per process, in memory: the ladder asks on every request, and
 * a Redis round trip there would cost every chat call for a rare event; each
 * process sees its own traffic fail, so it learns within `failureThreshold`
 * requests. Transitions (and only those) are reported to Redis, so an
 * operator sees every gateway's and worker's view of a channel
 * (`GET /admin/v1/channels/{id}`).
 */
export class ChannelHealth {
  readonly processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly breakers = new Map<string, CircuitBreaker>();
  /** The channels that exist, by id, with their creation time (the last `retain`). */
  private known: ReadonlyMap<string, number> | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly policy: BreakerPolicy,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    live.add(this);
  }

  private breaker(channelId: string): CircuitBreaker {
    let b = this.breakers.get(channelId);
    if (!b) this.breakers.set(channelId, (b = new CircuitBreaker(this.policy)));
    return b;
  }

  admit(channelId: string): boolean {
    const b = this.breakers.get(channelId);
    return b ? b.admit(this.now()) : true;
  }

  record(channelId: string, verdict: AttemptVerdict, reason?: string): void {
    // A healthy channel without a breaker yet needs none.
    if (verdict !== 'failed' && !this.breakers.has(channelId)) return;
    const b = this.breaker(channelId);
    if (!b.record(verdict, this.now(), reason)) return;
    const snap = b.snapshot(this.now());
    this.log[snap.state === 'open' ? 'warn' : 'info']('channel breaker', { channel: channelId, state: snap.state, failures: snap.consecutive_failures, reason });
    this.report(channelId, snap);
  }

  /** The ladder's view of ladders over channels (chat). */
  readonly ladder: LadderBreaker<{ id: string }> = this.forLadder((c) => c.id);

  /** The ladder's view: `idOf` names the channel of a ladder entry. */
  forLadder<C>(idOf: (c: C) => string): LadderBreaker<C> {
    return { admit: (c) => this.admit(idOf(c)), record: (c, verdict, reason) => this.record(idOf(c), verdict, reason) };
  }

  /** This process's breaker of a channel (closed when it never failed here). */
  state(channelId: string): ChannelBreakerState {
    const b = this.breakers.get(channelId);
    const snap = b ? b.snapshot(this.now()) : { state: 'closed' as const, consecutive_failures: 0, opened_at: null, probe_after: null, last_failure: null, opens: 0 };
    return { channel: channelId, ...snap };
  }

  /** Every breaker this process holds. */
  states(): ChannelBreakerState[] {
    return [...this.breakers.keys()].sort().map((id) => this.state(id));
  }

  /** Every process's last reported state of a channel (Redis), newest first. */
  async reported(channelId: string): Promise<ReportedBreakerState[]> {
    const all = await this.redis.hgetall(catalogueRedisKeys.channelHealth(channelId));
    return Object.entries(all)
      .map(([process, json]) => ({ process, ...(JSON.parse(json) as Omit<ReportedBreakerState, 'process'>) }))
      .sort((a, b) => b.reported_at - a.reported_at);
  }

  /**
   * Keep only the breakers of channels that still exist, as this process's
   * catalogue now lists them (`CatalogueCache.onChannels`). A channel deleted
   * through another process, or deleted and created again under its id (a new
   * creation time), loses its breaker here too: otherwise this process would
   * report a deleted channel forever and send a new channel last in its
   * ladders for an old channel's failures.
   */
  retain(channels: ReadonlyMap<string, number>): void {
    for (const id of [...this.breakers.keys()]) {
      const created = channels.get(id);
      const before = this.known?.get(id);
      if (created === undefined || (before !== undefined && before !== created)) this.breakers.delete(id);
    }
    this.known = channels;
  }

  /** Forget a channel's breakers (deleted channel). */
  async forget(channelId: string): Promise<void> {
    this.breakers.delete(channelId);
    await this.redis.del(catalogueRedisKeys.channelHealth(channelId));
  }

  private report(channelId: string, snap: BreakerSnapshot): void {
    const key = catalogueRedisKeys.channelHealth(channelId);
    this.redis
      .multi()
      .hset(key, this.processId, JSON.stringify({ ...snap, reported_at: this.now() }))
      .pexpire(key, REPORT_TTL_MS)
      .exec()
      .catch((err: unknown) => this.log.warn('channel breaker report failed', { channel: channelId, err }));
  }

  close(): void {
    live.delete(this);
  }
}

/**
 * The breaker states of this process (every channel that failed here at least
 * once), for metrics: `state` closed, open or half_open per channel.
 */
export function channelBreakerStates(): ChannelBreakerState[] {
  return [...live].flatMap((h) => h.states());
}
