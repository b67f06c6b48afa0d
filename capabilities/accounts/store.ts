import { Schema, type Connection, type Model } from 'mongoose';
import { shardTag } from '../../platform/redis';
import { docOptions, modelOn } from '../../platform/mongo';

/**
 * The accounts' collections: accounts, people and memberships, API keys, the
 * wallet's ledger, checkpoints and audits.
 */

/**
 * MongoDB collections. Written for FerretDB v1 as well as MongoDB: no
 * transactions, no TTL indexes, no change streams, and no compare-and-set on
 * updates. Atomic steps are unique-index inserts only (see DESIGN.md).
 */
export interface AccountDoc {
  _id: string;
  name: string;
  status: 'active' | 'inactive';
  enterprise: boolean;
  rate_limit: { rpm: number | null; concurrency: number | null };
  /** The user whose personal account this is (null for enterprises and operator-made accounts). */
  owner_user_id?: string | null;
  created_at: Date;
}

export interface UserDoc {
  _id: string;
  /** Lower-cased; unique. */
  email: string;
  name: string;
  /** scrypt hash (capabilities/accounts/passwords.ts); null until a password is set. */
  password_hash: string | null;
  personal_account_id: string;
  disabled: boolean;
  created_at: Date;
}

export interface MembershipDoc {
  /** `{enterprise_id}:{user_id}`: one membership per user and enterprise (the insert is the claim). */
  _id: string;
  enterprise_id: string;
  user_id: string;
  role: 'owner' | 'admin' | 'member';
  created_at: Date;
}

export interface ApiKeyDoc {
  _id: string;
  account_id: string;
  name: string;
  kind: 'standard' | 'legacy';
  prefix: string;
  /** The key's last 4 characters, shown beside the prefix so keys can be told apart (`sk-mgateway-…a1b2`); absent on keys made before it existed. */
  tail?: string | null;
  /** sha256 of the plaintext key: the lookup index. */
  hash: string;
  /** AES-256-GCM ciphertext, iv and tag (base64); absent on hash-only legacy keys. */
  secret?: { iv: string; tag: string; data: string } | null;
  allowed_models: string[] | null;
  expires_at: Date | null;
  enabled: boolean;
  deleted_at: Date | null;
  spend_cap_nano: number | null;
  /** Agent keys: the one agent this key calls (capabilities/agents/). */
  agent_id?: string | null;
  /** The ledger account charged when it is not the key's account (an agent key's escrow, `esc_...`). */
  wallet_id?: string | null;
  created_at: Date;
}

/** `escrow`: an agent key's cap held from the enterprise into its escrow, or the rest returned (capabilities/agents/escrow.ts). */
export type LedgerKind = 'grant' | 'topup' | 'charge' | 'reserve' | 'settle' | 'refund' | 'adjust' | 'escrow';

export interface LedgerDoc {
  /** Deterministic op id: `{accountId}:grant`, `{requestId}:charge`, `{taskId}:reserve`, ... */
  _id: string;
  account_id: string;
  key_id: string | null;
  kind: LedgerKind;
  /** Signed nano-credits: positive adds to the balance. */
  amount_nano: number;
  /** Signed change of the key's spend (nano). */
  key_spend_nano: number;
  ref: string | null;
  created_at: Date;
  /** When the row was written to the ledger (stamped by the inserting process): wallet checkpoints cut on it. */
  recorded_at?: Date;
  /** A chat charge written straight to the ledger while Redis was out: its writer and sequence number (capabilities/accounts/wallet.ts). */
  writer?: string | null;
  seq?: number | null;
}

/**
 * A wallet's balance and key spends summed over every ledger row recorded up
 * to `upto`: a projection rebuild starts here and reads only later rows.
 */
export interface WalletCheckpointDoc {
  /** `{walletId}:{upto ms}` */
  _id: string;
  account_id: string;
  upto: Date;
  balance_nano: number;
  key_spend: Array<{ key_id: string; nano: number }>;
  /** Ledger rows folded in, all checkpoints so far. */
  rows: number;
  created_at: Date;
}

export interface WalletAuditDoc {
  /** The business id of the audit (the workflow id): writing it twice is a no-op. */
  _id: string;
  account_id: string;
  ledger_balance_nano: number;
  projected_balance_nano: number;
  drift_nano: number;
  repaired: boolean;
  entries: number;
  created_at: Date;
}

const AccountSchema = new Schema<AccountDoc>(
  {
    _id: String,
    name: String,
    status: { type: String, default: 'active' },
    enterprise: { type: Boolean, default: false },
    rate_limit: { rpm: { type: Number, default: null }, concurrency: { type: Number, default: null } },
    owner_user_id: { type: String, default: null },
    created_at: Date,
  },
  docOptions,
);
/** The operator's account list, newest first (capabilities/accounts/account-access.ts), on every console page an operator opens. */
AccountSchema.index({ created_at: -1 });
const UserSchema = new Schema<UserDoc>(
  {
    _id: String,
    email: { type: String, unique: true },
    name: String,
    password_hash: { type: String, default: null },
    personal_account_id: String,
    disabled: { type: Boolean, default: false },
    created_at: Date,
  },
  docOptions,
);
const MembershipSchema = new Schema<MembershipDoc>(
  { _id: String, enterprise_id: { type: String, index: true }, user_id: { type: String, index: true }, role: String, created_at: Date },
  docOptions,
);
const ApiKeySchema = new Schema<ApiKeyDoc>(
  {
    _id: String,
    account_id: { type: String, index: true },
    name: String,
    kind: String,
    prefix: String,
    tail: { type: String, default: null },
    hash: { type: String, unique: true },
    secret: { type: Schema.Types.Mixed, default: null },
    allowed_models: { type: [String], default: null },
    expires_at: { type: Date, default: null },
    enabled: { type: Boolean, default: true },
    deleted_at: { type: Date, default: null },
    spend_cap_nano: { type: Number, default: null },
    agent_id: { type: String, default: null },
    wallet_id: { type: String, default: null },
    created_at: Date,
  },
  docOptions,
);
const LedgerSchema = new Schema<LedgerDoc>(
  {
    _id: String,
    // account_id alone needs no index of its own: (account_id, created_at) serves it.
    account_id: String,
    key_id: { type: String, default: null },
    kind: String,
    amount_nano: Number,
    key_spend_nano: { type: Number, default: 0 },
    ref: { type: String, default: null },
    created_at: Date,
    recorded_at: Date,
    writer: { type: String, default: undefined },
    seq: { type: Number, default: undefined },
  },
  docOptions,
);
LedgerSchema.index({ account_id: 1, created_at: -1 });
LedgerSchema.index({ account_id: 1, recorded_at: 1 });
const WalletCheckpointSchema = new Schema<WalletCheckpointDoc>(
  {
    _id: String,
    account_id: String,
    upto: Date,
    balance_nano: Number,
    key_spend: [{ _id: false, key_id: String, nano: Number }],
    rows: Number,
    created_at: Date,
  },
  docOptions,
);
WalletCheckpointSchema.index({ account_id: 1, upto: -1 });
const WalletAuditSchema = new Schema<WalletAuditDoc>(
  {
    _id: String, account_id: String, ledger_balance_nano: Number, projected_balance_nano: Number, drift_nano: Number,
    repaired: Boolean, entries: Number, created_at: Date,
  },
  docOptions,
);

export interface AccountModels {
  Account: Model<AccountDoc>;
  ApiKey: Model<ApiKeyDoc>;
  Ledger: Model<LedgerDoc>;
  WalletAudit: Model<WalletAuditDoc>;
  WalletCheckpoint: Model<WalletCheckpointDoc>;
  User: Model<UserDoc>;
  Membership: Model<MembershipDoc>;
}

/** The collections on a connection (registered once per connection; capabilities/store.ts opens them at start). */
export function accountModels(conn: Connection): AccountModels {
  return {
    Account: modelOn(conn, 'Account', AccountSchema, 'accounts'),
    ApiKey: modelOn(conn, 'ApiKey', ApiKeySchema, 'api_keys'),
    Ledger: modelOn(conn, 'Ledger', LedgerSchema, 'ledger'),
    WalletAudit: modelOn(conn, 'WalletAudit', WalletAuditSchema, 'wallet_audits'),
    WalletCheckpoint: modelOn(conn, 'WalletCheckpoint', WalletCheckpointSchema, 'wallet_checkpoints'),
    User: modelOn(conn, 'User', UserSchema, 'users'),
    Membership: modelOn(conn, 'Membership', MembershipSchema, 'memberships'),
  };
}

/** What people do with keys (capabilities/accounts/audit.ts): append-only. */
export interface AuditDoc {
  _id: string;
  account_id: string;
  /** `user:<id>`, `operator` or `api`. */
  actor: string;
  /** e.g. `key.reveal`, `key.disable`, `key.delete`, `key.create`. */
  action: string;
  target: string;
  detail: Record<string, unknown> | null;
  created_at: Date;
}

const AuditSchema = new Schema<AuditDoc>(
  { _id: String, account_id: String, actor: String, action: String, target: String, detail: { type: Schema.Types.Mixed, default: null }, created_at: Date },
  docOptions,
);
AuditSchema.index({ account_id: 1, created_at: -1 });
/** A key's history on its console page (`AuditLog.forTarget`). */
AuditSchema.index({ target: 1, created_at: -1 });

/** The key audit's collection (registered on first use). */
export function auditModel(conn: Connection): Model<AuditDoc> {
  return modelOn(conn, 'Audit', AuditSchema, 'audit_log');
}

/** The accounts' Redis key names: the wallet's projection, key and account records, rate limits. `walletId` is the account a key's calls are charged to (domain/api-key `walletOf`). */
export const accountRedisKeys = {
  balance: (walletId: string) => `${shardTag(walletId)}bal:${walletId}`,
  /** A key's spend lives with the wallet it charges, so one script moves both. */
  keySpend: (walletId: string, keyId: string) => `${shardTag(walletId)}kspend:${keyId}`,
  /** Dedupe marker of a non-chat op, held while its ledger row may be missing (capabilities/accounts/wallet.ts). */
  op: (walletId: string, opId: string) => `${shardTag(walletId)}op:${opId}`,
  /** A gateway's sequence-number window for its chat charges on one wallet (capabilities/accounts/wallet.ts). */
  chatSeq: (walletId: string, writer: string) => `${shardTag(walletId)}cseq:${walletId}:${writer}`,
  /** Write-ahead stream of ledger ops and usage rows of one shard, drained to Mongo in batches (capabilities/accounts/ledger-journal.ts). */
  journal: (shard: number) => `{ws${shard}}journal`,
  journalOf: (walletId: string) => `${shardTag(walletId)}journal`,
  /** Immutable: key hash -> key id, account, wallet (cacheable forever in process). */
  keyHash: (hash: string) => `khash:${hash}`,
  /** Mutable key state (enabled, expiry, spend cap, ...) under its account's shard. */
  keyRecord: (accountId: string, keyId: string) => `${shardTag(accountId)}key:${keyId}`,
  /** Held while one change of a key is written (capabilities/accounts/keys.ts `change`). */
  keyLock: (keyId: string) => `keylock:${keyId}`,
  account: (accountId: string) => `${shardTag(accountId)}acct:${accountId}`,
  /** Held while one change of an account is written (capabilities/accounts/accounts.ts `update`). */
  accountLock: (accountId: string) => `acctlock:${accountId}`,
  rateWindow: (accountId: string) => `${shardTag(accountId)}rl:win:${accountId}`,
  rateLeases: (accountId: string) => `${shardTag(accountId)}rl:conc:${accountId}`,
  keyLastUsed: (accountId: string, keyId: string) => `${shardTag(accountId)}klast:${keyId}`,
  /** A key that never exists, in an account's slot (a script slot that has nothing to touch). */
  none: (accountId: string) => `${shardTag(accountId)}none`,
  /** A console session, under the sha256 of its cookie value (gateway/console/session.ts). */
  consoleSession: (tokenHash: string) => `console:session:${tokenHash}`,
};
