/** `sk-` + 8-character service tag + `-` + 64 hex: prefix 12, total 76 (spec 1 section 2.1). */
export const KEY_PATTERN = /^sk-[a-z0-9]{8}-[0-9a-f]{64}$/;
export const KEY_PREFIX_LENGTH = 12;
/** The last characters shown after the prefix to tell keys apart (`sk-mgateway-…a1b2`). */
export const KEY_TAIL_LENGTH = 4;
export const KEY_LENGTH = 76;

/** The state of a key as every gateway instance sees it (cached in Redis, truth in Mongo). */
export interface KeyRecord {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  kind: 'standard' | 'legacy';
  allowed_models: string[] | null;
  expires_at: number | null;
  enabled: boolean;
  deleted: boolean;
  spend_cap_nano: number | null;
  /** Set on agent keys: such a key calls only POST /v1/chat/completions, as this agent. */
  agent_id?: string | null;
  /** The ledger account this key's calls are charged to, when not its own account (an agent key's escrow). */
  wallet_id?: string | null;
}

/** The ledger account a key's calls are charged to and gated on. */
export function walletOf(key: Pick<KeyRecord, 'account_id' | 'wallet_id'>): string {
  return key.wallet_id ?? key.account_id;
}

export interface AccountRecord {
  id: string;
  name: string;
  status: 'active' | 'inactive';
  enterprise: boolean;
  rpm: number | null;
  concurrency: number | null;
}

/** Who is calling: the authenticated key, its account and their balances, as the gateway's auth step read them. */
export interface AuthState {
  key: KeyRecord;
  account: AccountRecord;
  balanceNano: number;
  keySpendNano: number;
}

/** What a key may spend now: min(account balance, cap - spent), floor 0. */
export function remainingNano(balanceNano: number, key: Pick<KeyRecord, 'spend_cap_nano'>, keySpendNano: number): number {
  const capLeft = key.spend_cap_nano === null ? Infinity : key.spend_cap_nano - keySpendNano;
  return Math.max(0, Math.min(balanceNano, capLeft));
}

/** allowed_models: null allows all, [] none, otherwise the listed ids (or their aliases). */
export function isModelAllowed(allowed: string[] | null, ids: string[]): boolean {
  if (allowed === null) return true;
  return ids.some((id) => allowed.includes(id));
}
