import type { Redis } from 'ioredis';
import { type CatalogueModels, catalogueRedisKeys } from './store';
import type { Logger } from '../../platform/logger';
import { type RedisClient } from '../../platform/redis';
import type { Catalogue } from '../../domain/catalogue';
import { loadCatalogueAndChannels, type CatalogueEnv } from './records';

/** Every process reloads the whole registry this often anyway (a re-seed changes models without a version bump). */
const FULL_RELOAD_MS = 30_000;

/**
 * The process's catalogue, kept current without a restart. A change through
 * the management API bumps a version in Redis and publishes it; every gateway
 * and worker reloads from Mongo on the message, and also polls the version
 * (every `pollMs`) in case a message was missed while its subscriber
 * reconnected. Loads are serialized and coalesced: one in flight, at most one queued.
 */
export class CatalogueCache {
  private catalogue: Catalogue;
  private version: string | null = null;
  private running: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  private subscriber: Redis | null = null;
  private timers: ReturnType<typeof setInterval>[] = [];
  private readonly channelListeners: Array<(channels: ReadonlyMap<string, number>) => void> = [];

  private constructor(
    private readonly db: CatalogueModels,
    private readonly redis: RedisClient,
    private readonly prefix: string,
    readonly env: CatalogueEnv,
    private readonly log: Logger,
    first: Catalogue,
    private channelIds: ReadonlyMap<string, number>,
  ) {
    this.catalogue = first;
  }

  static async start(p: { db: CatalogueModels; redis: RedisClient; prefix: string; env: CatalogueEnv; log: Logger; pollMs: number }): Promise<CatalogueCache> {
    const version = await p.redis.get(catalogueRedisKeys.catalogueVersion());
    const first = await loadCatalogueAndChannels(p.db, p.env);
    const cache = new CatalogueCache(p.db, p.redis, p.prefix, p.env, p.log, first.catalogue, first.channels);
    cache.version = version;
    cache.listen(p.pollMs);
    return cache;
  }

  /** The current registry. */
  readonly current = (): Catalogue => this.catalogue;

  /**
   * Call `fn` now and after every reload with the channels that exist (not
   * deleted), by id, each with its creation time in ms. ChannelHealth drops
   * the breakers of channels deleted through any process with it.
   */
  onChannels(fn: (channels: ReadonlyMap<string, number>) => void): void {
    this.channelListeners.push(fn);
    fn(this.channelIds);
  }

  /** Tell every process (this one first, before it returns) that channels changed. */
  async changed(): Promise<void> {
    await this.redis.incr(catalogueRedisKeys.catalogueVersion());
    await this.reload();
    await this.redis.publish(catalogueRedisKeys.changed(this.prefix), String(this.version ?? ''));
  }

  /** Reload now (or join the queued reload). */
  reload(): Promise<void> {
    if (this.queued) return this.queued;
    const next = this.running.then(async () => {
      this.queued = null;
      const version = await this.redis.get(catalogueRedisKeys.catalogueVersion());
      const loaded = await loadCatalogueAndChannels(this.db, this.env);
      this.catalogue = loaded.catalogue;
      this.channelIds = loaded.channels;
      this.version = version;
      for (const fn of this.channelListeners) fn(loaded.channels);
    });
    this.queued = next;
    this.running = next.catch((err: unknown) => this.log.warn('catalogue reload failed', { err }));
    return next;
  }

  private listen(pollMs: number): void {
    const sub = this.redis.duplicate();
    this.subscriber = sub;
    sub.on('error', (err) => this.log.debug('catalogue subscriber', { err }));
    sub.on('message', () => void this.reload().catch(() => undefined));
    sub.subscribe(catalogueRedisKeys.changed(this.prefix)).catch((err: unknown) => this.log.warn('catalogue subscribe failed', { err }));
    const poll = setInterval(() => {
      this.redis.get(catalogueRedisKeys.catalogueVersion()).then((v) => {
        if (v !== this.version) return this.reload();
      }).catch(() => undefined);
    }, pollMs);
    const full = setInterval(() => void this.reload().catch(() => undefined), FULL_RELOAD_MS);
    for (const t of [poll, full]) t.unref();
    this.timers.push(poll, full);
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.subscriber?.disconnect();
    await this.running;
  }
}
