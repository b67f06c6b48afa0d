import { readFileSync } from 'node:fs';
import { Cluster, Redis } from 'ioredis';
import { createLogger, type Logger } from './logger';

const lua = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');

/**
 * Redis with the project's Lua scripts registered as commands. Every key gets
 * `prefix`. The same interface over one Redis or a Redis Cluster: every
 * script's keys share one hash slot (`shardTag`), so each runs on the node
 * that owns its account's shard.
 */
export interface RedisClient extends Redis {
  walletApply(
    balanceKey: string, spendKey: string, dedupeKey: string, journalKey: string, leaseKey: string,
    delta: number, keyDelta: number, gate: 0 | 1, cap: number,
    mode: 'm' | 's', markerTtlOrSeq: number, floor: number, seqTtlMs: number, entry: string, marked: '0' | '1', leaseMember: string,
  ): Promise<[number, number, number, string]>;
  walletLoad(...args: Array<string | number>): Promise<number>;
  leaseRenew(leaseKey: string, member: string, leaseMs: number): Promise<number>;
  authGate(
    keyRecord: string, account: string, balance: string, keySpend: string, window: string, leases: string,
    member: string, leaseMs: number, applyLimits: '0' | '1',
  ): Promise<[string | null, string | null, string | null, string | null, number, number, string, number, number, number, number, number]>;
}

export interface RedisTarget {
  /** Single Redis (ignored when `clusterNodes` is set). */
  url: string;
  prefix: string;
  /** `host:port,host:port`: seed nodes of a Redis Cluster. */
  clusterNodes?: string;
}

export function connectRedis(url: string, prefix: string, clusterNodes?: string, log?: Logger): RedisClient {
  if (prefix.includes('{') || prefix.includes('}')) throw new Error('REDIS_PREFIX must not contain { or }: it would change the keys\' hash slots');
  let redis: RedisClient;
  if (clusterNodes) {
    const nodes = clusterNodes.split(',').map((n) => n.trim()).filter(Boolean).map((n) => {
      const [host, port] = n.replace(/^redis:\/\//, '').split(':');
      return { host, port: Number(port) };
    });
    redis = new Cluster(nodes, {
      keyPrefix: prefix,
      enableAutoPipelining: true,
      // Auto-pipelines group commands by the slot of their first argument: commands whose first argument is
      // not a key (script text, XREADGROUP's GROUP, the load script's key count) go out on their own.
      autoPipeliningIgnoredCommands: ['eval', 'evalsha', 'xreadgroup', 'xread', 'xgroup', 'xinfo', 'walletLoad'],
      slotsRefreshTimeout: 10_000,
      redisOptions: { maxRetriesPerRequest: 3 },
    }) as unknown as RedisClient;
  } else {
    redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 3, enableAutoPipelining: true }) as RedisClient;
  }
  watchOutages(redis, log ?? createLogger('warn', { component: 'redis' }));
  redis.defineCommand('walletApply', { numberOfKeys: 5, lua: lua('wallet-apply') });
  redis.defineCommand('walletLoad', { lua: lua('wallet-load') });
  redis.defineCommand('leaseRenew', { numberOfKeys: 1, lua: lua('lease-renew') });
  redis.defineCommand('authGate', { numberOfKeys: 6, lua: lua('auth-gate') });
  return redis;
}

/**
 * ioredis emits 'error' on every failed (re)connect while Redis is down; an
 * emitter with no listener prints "[ioredis] Unhandled error event" on each.
 * Commands meanwhile fail or queue on their own (maxRetriesPerRequest), so the
 * events only need a log: one warning when an outage starts and one line when
 * the client is ready again, with how long it lasted.
 */
export function watchOutages(client: Redis | Cluster, log: Logger): void {
  let downSince: number | null = null;
  const down = (err: unknown) => {
    if (downSince !== null) return;
    downSince = Date.now();
    log.warn('redis unreachable; commands fail or wait until it is back', { err });
  };
  client.on('error', down);
  // A Cluster reports its nodes' failures as 'node error' as well.
  if (client instanceof Cluster) client.on('node error', down);
  client.on('ready', () => {
    if (downSince === null) return;
    log.warn('redis reachable again', { down_ms: Date.now() - downSince });
    downSince = null;
  });
}

/**
 * Accounts are spread over this many wallet shards; each shard is one hash
 * tag `{wsN}`, so one Redis Cluster slot. Everything a script touches for one
 * account (balance, key spends, dedupe state, limits, key state) and the
 * shard's settlement journal share it. Fixed for a deployment: changing it
 * moves every account's keys (drain the journals first; projections then
 * reload from the ledger).
 */
export const WALLET_SHARDS = 32;

/** FNV-1a: a stable spread of account ids over the shards. */
export function shardOf(accountId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i++) {
    h ^= accountId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % WALLET_SHARDS;
}

/** The hash tag that puts a key in its account's shard: every key a script touches for one account shares one slot. */
export const shardTag = (accountId: string) => `{ws${shardOf(accountId)}}`;

export function sameShard(a: string, b: string): boolean {
  return a === b || shardOf(a) === shardOf(b);
}

/** Hot-path commands of this process waiting on Redis (`sendHot`). */
let hotInFlight = 0;

/**
 * Send one hot-path command (a chat call's auth read or gate, its charge) at once when nothing else of
 * this process waits on Redis, and through ioredis's auto-pipeline otherwise. The auto-pipeline holds
 * a command until the event loop's check phase to batch it with others: worth it under concurrency
 * (at 64 clients it saves 7-11 % of the gateway's CPU a call), a cost alone (one client: the call's
 * p50 1.53 -> 1.29 ms with no auto-pipeline at all). Sent at once only when no auto-pipelined command
 * is queued either, so no command overtakes one issued before it. A single Redis only: a Cluster's
 * commands always take its auto-pipeline.
 */
export function sendHot<T>(redis: RedisClient, send: () => Promise<T>): Promise<T> {
  const alone = hotInFlight === 0 && redis.options.enableAutoPipelining === true && !(redis instanceof Cluster) && redis.autoPipelineQueueSize === 0;
  hotInFlight++;
  let sent: Promise<T>;
  try {
    if (alone) {
      // ioredis reads the option when the command is issued (synchronously, in send).
      redis.options.enableAutoPipelining = false;
      try {
        sent = send();
      } finally {
        redis.options.enableAutoPipelining = true;
      }
    } else {
      sent = send();
    }
  } catch (err) {
    hotInFlight--;
    throw err;
  }
  return sent.finally(() => {
    hotInFlight--;
  });
}
