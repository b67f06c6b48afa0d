import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';

const lua = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');

/** Redis with the project's Lua scripts registered as commands. Every key gets `prefix`. */
export interface RedisClient extends Redis {
  walletApply(
    balanceKey: string, opKey: string, spendKey: string,
    delta: number, keyDelta: number, gate: 0 | 1, cap: number, ttl: number,
  ): Promise<[number, number, number]>;
  walletLoad(...args: Array<string | number>): Promise<number>;
  rateAcquire(windowKey: string, leaseKey: string, rpm: number, conc: number, member: string, leaseMs: number):
    Promise<[number, string, number, number, number]>;
  leaseRenew(leaseKey: string, member: string, leaseMs: number): Promise<number>;
}

export function connectRedis(url: string, prefix: string): RedisClient {
  const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 3, enableAutoPipelining: true }) as RedisClient;
  redis.defineCommand('walletApply', { numberOfKeys: 3, lua: lua('wallet-apply') });
  redis.defineCommand('walletLoad', { lua: lua('wallet-load') });
  redis.defineCommand('rateAcquire', { numberOfKeys: 2, lua: lua('rate-acquire') });
  redis.defineCommand('leaseRenew', { numberOfKeys: 1, lua: lua('lease-renew') });
  return redis;
}

/** Key names in one place. */
export const rkeys = {
  balance: (accountId: string) => `bal:${accountId}`,
  keySpend: (keyId: string) => `kspend:${keyId}`,
  op: (opId: string) => `op:${opId}`,
  keyRecord: (hash: string) => `key:${hash}`,
  account: (accountId: string) => `acct:${accountId}`,
  rateWindow: (accountId: string) => `rl:win:${accountId}`,
  rateLeases: (accountId: string) => `rl:conc:${accountId}`,
  keyLastUsed: (keyId: string) => `klast:${keyId}`,
};
