import { readFileSync } from 'node:fs';
import { Cluster, Redis } from 'ioredis';
import { createLogger, type Logger } from './logger';

const lua = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');

/**
 * Redis with the project's Lua scripts registered as commands. Every key gets
 * `prefix`. The same interface over one Redis or a Redis Cluster: every
 * script's keys share one hash slot (see `rkeys`), so each runs on the node
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

const tag = (accountId: string) => `{ws${shardOf(accountId)}}`;

/** Key names in one place. `walletId` is the account a key's calls are charged to (domain/api-key `walletOf`). */
export const rkeys = {
  balance: (walletId: string) => `${tag(walletId)}bal:${walletId}`,
  /** A key's spend lives with the wallet it charges, so one script moves both. */
  keySpend: (walletId: string, keyId: string) => `${tag(walletId)}kspend:${keyId}`,
  /** Dedupe marker of a non-chat op, held while its ledger row may be missing (capabilities/accounts/wallet.ts). */
  op: (walletId: string, opId: string) => `${tag(walletId)}op:${opId}`,
  /** A gateway's sequence-number window for its chat charges on one wallet (capabilities/accounts/wallet.ts). */
  chatSeq: (walletId: string, writer: string) => `${tag(walletId)}cseq:${walletId}:${writer}`,
  /** Write-ahead stream of ledger ops and usage rows of one shard, drained to Mongo in batches (capabilities/accounts/ledger-journal.ts). */
  journal: (shard: number) => `{ws${shard}}journal`,
  journalOf: (walletId: string) => `${tag(walletId)}journal`,
  /** Immutable: key hash -> key id, account, wallet (cacheable forever in process). */
  keyHash: (hash: string) => `khash:${hash}`,
  /** Mutable key state (enabled, expiry, spend cap, ...) under its account's shard. */
  keyRecord: (accountId: string, keyId: string) => `${tag(accountId)}key:${keyId}`,
  /** Held while one change of a key is written (capabilities/accounts/keys.ts `change`). */
  keyLock: (keyId: string) => `keylock:${keyId}`,
  account: (accountId: string) => `${tag(accountId)}acct:${accountId}`,
  /** Held while one change of an account is written (capabilities/accounts/accounts.ts `update`). */
  accountLock: (accountId: string) => `acctlock:${accountId}`,
  rateWindow: (accountId: string) => `${tag(accountId)}rl:win:${accountId}`,
  rateLeases: (accountId: string) => `${tag(accountId)}rl:conc:${accountId}`,
  keyLastUsed: (accountId: string, keyId: string) => `${tag(accountId)}klast:${keyId}`,
  /** The calls in flight on an agent key's escrow wallet, and its end marker (capabilities/agents/escrow-flights.ts). */
  escrowFlights: (walletId: string) => `${tag(walletId)}eflight:${walletId}`,
  escrowEnd: (walletId: string) => `${tag(walletId)}eend:${walletId}`,
  /** A key that never exists, in an account's slot (a script slot that has nothing to touch). */
  none: (accountId: string) => `${tag(accountId)}none`,
  /** An async image task still in flight as submitted (capabilities/media/media-tasks.ts): polls answer 202 from it. */
  taskPending: (taskId: string) => `taskpend:${taskId}`,
  /** Bumped each time a build of the base goes live or a document is removed: search indexes key on it. */
  kbVersion: (accountId: string, kbId: string) => `kbver:${accountId}/${kbId}`,
  /** Bumped on every channel change: each process's catalogue cache reloads when it moves (capabilities/catalogue/catalogue-cache.ts). */
  catalogueVersion: () => 'catalogue:version',
  /** Each process's last reported circuit-breaker state of a channel, by process id (capabilities/catalogue/channel-health.ts). */
  channelHealth: (channelId: string) => `chan:health:${channelId}`,
};

/** Pub/sub channel names are not keys: ioredis does not prefix them, so the deployment prefix is added here. */
export const rchannels = {
  catalogueChanged: (prefix: string) => `${prefix}catalogue:changed`,
};

export function sameShard(a: string, b: string): boolean {
  return a === b || shardOf(a) === shardOf(b);
}
