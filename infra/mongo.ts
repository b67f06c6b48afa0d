import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import type { TaskDocument } from '../domain/media/task';

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
  created_at: Date;
}

export interface ApiKeyDoc {
  _id: string;
  account_id: string;
  name: string;
  kind: 'standard' | 'legacy';
  prefix: string;
  /** sha256 of the plaintext key: the lookup index. */
  hash: string;
  /** AES-256-GCM ciphertext, iv and tag (base64); absent on hash-only legacy keys. */
  secret?: { iv: string; tag: string; data: string } | null;
  allowed_models: string[] | null;
  expires_at: Date | null;
  enabled: boolean;
  deleted_at: Date | null;
  spend_cap_nano: number | null;
  created_at: Date;
}

export type LedgerKind = 'grant' | 'topup' | 'charge' | 'reserve' | 'settle' | 'refund' | 'adjust';

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
}

export interface UsageDoc {
  _id: string;
  account_id: string;
  key_id: string | null;
  key_name: string | null;
  key_prefix: string | null;
  endpoint: string;
  model: string | null;
  status: 'success' | 'error' | 'interrupted' | 'rejected' | 'in_flight';
  error_code: string | null;
  error_message: string | null;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  server_tool_calls: number;
  unit_count: number;
  unit_type: string | null;
  cost_nano: number;
  reserved_nano: number;
  latency_ms: number;
  request_id: string;
  task_id: string | null;
  submitted_at: Date | null;
  attempts_count: number;
  result_urls: string[];
  result_expires_at: Date | null;
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

/** The task document's type lives in the domain, with the states and kinds it takes. */
export type TaskDoc = TaskDocument;

/**
 * A chunk (at most 8 MB) of a large file kept out of a task document (16 MB
 * limit): uploaded reference images, large b64_json answers. `_id` is
 * `{group}/{file}/{chunk}`; group = the submission's request id or the task id.
 */
export interface TaskFileDoc {
  _id: string;
  group: string;
  content_type: string;
  data: Buffer;
  created_at: Date;
}

export interface IdempotencyDoc {
  /** `{accountId}:{sha256(Idempotency-Key)}`: the claim is this insert. */
  _id: string;
  account_id: string;
  body_hash: string;
  state: 'in_flight' | 'done';
  /** Random id of the request holding the claim. */
  holder: string;
  /** In flight: the claim lapses after this (10 min). Done: kept until this (7 days). */
  until: Date;
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
  not_cached: boolean;
  created_at: Date;
}

export interface CatalogueModelDoc {
  _id: string;
  doc: unknown;
  updated_at: Date;
}

export interface CatalogueRulesDoc {
  _id: string;
  doc: unknown;
  updated_at: Date;
}

const opts = { versionKey: false as const, _id: false };

const AccountSchema = new Schema<AccountDoc>(
  {
    _id: String,
    name: String,
    status: { type: String, default: 'active' },
    enterprise: { type: Boolean, default: false },
    rate_limit: { rpm: { type: Number, default: null }, concurrency: { type: Number, default: null } },
    created_at: Date,
  },
  opts,
);

const ApiKeySchema = new Schema<ApiKeyDoc>(
  {
    _id: String,
    account_id: { type: String, index: true },
    name: String,
    kind: String,
    prefix: String,
    hash: { type: String, unique: true },
    secret: { type: Schema.Types.Mixed, default: null },
    allowed_models: { type: [String], default: null },
    expires_at: { type: Date, default: null },
    enabled: { type: Boolean, default: true },
    deleted_at: { type: Date, default: null },
    spend_cap_nano: { type: Number, default: null },
    created_at: Date,
  },
  opts,
);

const LedgerSchema = new Schema<LedgerDoc>(
  {
    _id: String,
    account_id: { type: String, index: true },
    key_id: { type: String, default: null },
    kind: String,
    amount_nano: Number,
    key_spend_nano: { type: Number, default: 0 },
    ref: { type: String, default: null },
    created_at: Date,
  },
  opts,
);
LedgerSchema.index({ account_id: 1, created_at: -1 });

const UsageSchema = new Schema<UsageDoc>(
  {
    _id: String,
    account_id: { type: String, index: true },
    key_id: { type: String, default: null },
    key_name: { type: String, default: null },
    key_prefix: { type: String, default: null },
    endpoint: String,
    model: { type: String, default: null },
    status: String,
    error_code: { type: String, default: null },
    error_message: { type: String, default: null },
    input_tokens: { type: Number, default: 0 },
    output_tokens: { type: Number, default: 0 },
    cached_tokens: { type: Number, default: 0 },
    server_tool_calls: { type: Number, default: 0 },
    unit_count: { type: Number, default: 0 },
    unit_type: { type: String, default: null },
    cost_nano: { type: Number, default: 0 },
    reserved_nano: { type: Number, default: 0 },
    latency_ms: { type: Number, default: 0 },
    request_id: String,
    task_id: { type: String, default: null },
    submitted_at: { type: Date, default: null },
    attempts_count: { type: Number, default: 1 },
    result_urls: { type: [String], default: [] },
    result_expires_at: { type: Date, default: null },
    created_at: Date,
  },
  opts,
);
UsageSchema.index({ account_id: 1, created_at: -1 });
UsageSchema.index({ key_id: 1, created_at: -1 });

const WalletAuditSchema = new Schema<WalletAuditDoc>(
  {
    _id: String, account_id: String, ledger_balance_nano: Number, projected_balance_nano: Number, drift_nano: Number,
    repaired: Boolean, entries: Number, created_at: Date,
  },
  opts,
);

const TaskSchema = new Schema<TaskDoc>(
  {
    _id: String, account_id: String, key_id: String, key_name: String, key_prefix: String, kind: String, endpoint: String,
    model: String, state: String, progress: { type: Number, default: null }, input: Schema.Types.Mixed, quote: Schema.Types.Mixed,
    reserved_nano: Number, cost_nano: { type: Number, default: 0 }, unit_count: { type: Number, default: 0 },
    upstream: { type: Schema.Types.Mixed, default: null }, result: { type: Schema.Types.Mixed, default: null },
    final_body: { type: String, default: null }, final_status: { type: Number, default: null },
    error_code: { type: String, default: null }, error_message: { type: String, default: null }, request_id: String,
    created_at: Date, started_at: { type: Date, default: null }, completed_at: { type: Date, default: null }, updated_at: Date,
  },
  { ...opts, minimize: false },
);
TaskSchema.index({ account_id: 1, endpoint: 1, created_at: -1 });

const IdempotencySchema = new Schema<IdempotencyDoc>(
  {
    _id: String, account_id: String, body_hash: String, state: String, holder: String, until: Date,
    status: { type: Number, default: null }, headers: { type: Schema.Types.Mixed, default: null }, body: { type: String, default: null },
    not_cached: { type: Boolean, default: false }, created_at: Date,
  },
  opts,
);

const TaskFileSchema = new Schema<TaskFileDoc>({ _id: String, group: String, content_type: String, data: Buffer, created_at: Date }, opts);

const CatalogueModelSchema = new Schema<CatalogueModelDoc>({ _id: String, doc: Schema.Types.Mixed, updated_at: Date }, opts);
const CatalogueRulesSchema = new Schema<CatalogueRulesDoc>({ _id: String, doc: Schema.Types.Mixed, updated_at: Date }, opts);

export interface Db {
  conn: Connection;
  Account: Model<AccountDoc>;
  ApiKey: Model<ApiKeyDoc>;
  Ledger: Model<LedgerDoc>;
  Usage: Model<UsageDoc>;
  WalletAudit: Model<WalletAuditDoc>;
  Task: Model<TaskDoc>;
  Idempotency: Model<IdempotencyDoc>;
  TaskFile: Model<TaskFileDoc>;
  CatalogueModel: Model<CatalogueModelDoc>;
  CatalogueRules: Model<CatalogueRulesDoc>;
}

export async function connectMongo(url: string): Promise<Db> {
  const conn = mongoose.createConnection(url, { serverSelectionTimeoutMS: 10_000, maxPoolSize: 20 });
  await conn.asPromise();
  const db: Db = {
    conn,
    Account: conn.model('Account', AccountSchema, 'accounts'),
    ApiKey: conn.model('ApiKey', ApiKeySchema, 'api_keys'),
    Ledger: conn.model('Ledger', LedgerSchema, 'ledger'),
    Usage: conn.model('Usage', UsageSchema, 'usage'),
    WalletAudit: conn.model('WalletAudit', WalletAuditSchema, 'wallet_audits'),
    Task: conn.model('Task', TaskSchema, 'tasks'),
    Idempotency: conn.model('Idempotency', IdempotencySchema, 'idempotency'),
    TaskFile: conn.model('TaskFile', TaskFileSchema, 'task_files'),
    CatalogueModel: conn.model('CatalogueModel', CatalogueModelSchema, 'catalogue_models'),
    CatalogueRules: conn.model('CatalogueRules', CatalogueRulesSchema, 'catalogue_rules'),
  };
  await Promise.all([db.Account, db.ApiKey, db.Ledger, db.Usage, db.Task].map((m) => m.init()));
  return db;
}

/** True for a duplicate-key error from a unique index (MongoDB and FerretDB both use 11000). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
