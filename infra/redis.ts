import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';

const lua = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');

/** Redis with the project's Lua scripts registered as commands. Every key gets `prefix`. */
export interface RedisClient extends Redis {
  walletApply(
    balanceKey: string, opKey: string, spendKey: string, journalKey: string,
    delta: number, keyDelta: number, gate: 0 | 1, cap: number, ttl: number, entry: string,
  ): Promise<[number, number, number]>;
  walletLoad(...args: Array<string | number>): Promise<number>;
  leaseRenew(leaseKey: string, member: string, leaseMs: number): Promise<number>;
  authGate(
    keyRecord: string, account: string, balance: string, keySpend: string, window: string, leases: string,
    member: string, leaseMs: number, applyLimits: '0' | '1',
  ): Promise<[string | null, string | null, string | null, string | null, number, number, string, number, number, number, number, number]>;
}

export function connectRedis(url: string, prefix: string): RedisClient {
  const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 3, enableAutoPipelining: true }) as RedisClient;
  redis.defineCommand('walletApply', { numberOfKeys: 4, lua: lua('wallet-apply') });
  redis.defineCommand('walletLoad', { lua: lua('wallet-load') });
  redis.defineCommand('leaseRenew', { numberOfKeys: 1, lua: lua('lease-renew') });
  redis.defineCommand('authGate', { numberOfKeys: 6, lua: lua('auth-gate') });
  return redis;
}

/** Key names in one place. */
export const rkeys = {
  balance: (accountId: string) => `bal:${accountId}`,
  keySpend: (keyId: string) => `kspend:${keyId}`,
  op: (opId: string) => `op:${opId}`,
  /** Write-ahead stream of ledger ops and usage rows, drained to Mongo in batches (services/ledger-journal.ts). */
  ledgerJournal: () => 'journal:ledger',
  keyRecord: (hash: string) => `key:${hash}`,
  account: (accountId: string) => `acct:${accountId}`,
  rateWindow: (accountId: string) => `rl:win:${accountId}`,
  rateLeases: (accountId: string) => `rl:conc:${accountId}`,
  keyLastUsed: (keyId: string) => `klast:${keyId}`,
  /** An async image task still in flight as submitted (services/media-tasks.ts): polls answer 202 from it. */
  taskPending: (taskId: string) => `taskpend:${taskId}`,
  /** Bumped each time a build of the base goes live or a document is removed: search indexes key on it. */
  kbVersion: (accountId: string, kbId: string) => `kbver:${accountId}/${kbId}`,
};
