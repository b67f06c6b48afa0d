import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import type { TaskDocument } from '../domain/media/task';
import type { CallAttempt } from '../domain/call-attempts';
import type { Logger } from './logger';

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

/** A knowledge base. The personal base `default` exists for every account (made on first use). */
export interface KbDoc {
  /** `{account_id}/{kb_id}`. */
  _id: string;
  account_id: string;
  kb_id: string;
  name: string;
  kind: 'personal' | 'team';
  /** Team bases: `all` members of the enterprise, or the listed user ids. Personal bases: ignored. */
  readers: 'all' | string[];
  /** Which compiler turns documents into pages (`rules` or `llm`), and the chat model for `llm`. */
  compiler: 'rules' | 'llm';
  compiler_model: string | null;
  deleted_at: Date | null;
  created_at: Date;
}

/**
 * One uploaded document of a base. Its pages are those of its live build:
 * a build writes all its pages first, then points `live_build_id` at itself,
 * so readers never see half a build.
 */
export interface KbDocumentDoc {
  _id: string;
  account_id: string;
  kb_id: string;
  filename: string;
  content_type: string;
  /** sha256 of the bytes: re-uploading the same bytes is a no-op. */
  content_hash: string;
  /** Storage key of the file (capabilities/knowledge/storage). */
  r2_key: string;
  size: number;
  live_build_id: string | null;
  /** Sequence number of the live build: a build goes live only over an older one (capabilities/knowledge/ingestion). */
  live_seq: number;
  /** Builds up to this sequence number were deleted with the document and never go live. */
  deleted_seq: number;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** One build of a document: its upload, compiled by one Temporal workflow (workflowId = build id). */
export interface KbBuildDoc {
  _id: string;
  /** `{document_id}#{seq}`, unique: claiming the next sequence number is this insert. */
  doc_seq: string;
  account_id: string;
  kb_id: string;
  document_id: string;
  seq: number;
  filename: string;
  format: 'markdown' | 'text' | 'html' | 'pdf' | 'docx';
  content_type: string;
  content_hash: string;
  r2_key: string;
  size: number;
  /** `rules`, or the chat model of the LLM compiler. */
  compiler: 'rules' | 'llm';
  model: string;
  state: 'queued' | 'running' | 'succeeded' | 'failed';
  pages_made: number;
  /** Progress of a running build: pages written so far, out of the pages the compile made (null until it has). */
  pages_done?: number;
  pages_total?: number | null;
  warnings: string[];
  error: { code: string; message: string } | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
}

/** A team base id, claimed platform-wide by this insert (team base ids are unique across accounts). */
export interface KbIdClaimDoc {
  _id: string;
  account_id: string;
  created_at: Date;
}

/** A page as stored: the spec's Page fields plus what ties it to its build. */
export interface PageDoc {
  /** `{build_id}:{page_id}`. */
  _id: string;
  /** The public, stable page id (the same across rebuilds of the same document). */
  page_id: string;
  account_id: string;
  kb_id: string;
  document_id: string;
  build_id: string;
  title: string;
  summary: string;
  tags: string[];
  aliases: string[];
  links: string[];
  body: string;
  confidence: number;
  needs_review: boolean;
  source: { r2_key: string; filename: string; locator: string; compiled_at: string; model: string };
  outgoing_links: Array<{ id: string; resolved: boolean; title: string }>;
  /** What the page asks to link to (capabilities/knowledge/compiler/links.ts); links are resolved again when the base changes. */
  link_requests?: { wiki: string[]; files: Array<{ file: string; anchor: string | null }> };
  /** Heading slug (`doc.md#anchor` targets) and order within the document. */
  anchor?: string;
  ordinal?: number;
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
  /** Billed on the character estimate: the upstream's usage was missing, zero or implausibly low (or the turn was cut). */
  usage_estimated?: boolean;
  /** The upstream attempts (channel, status, latency), at most three; never the prompt (docs/call-log.md). */
  attempts?: CallAttempt[];
  /** Agent-key calls: the agent, and the knowledge-base pages injected as context (ids). */
  agent_id?: string | null;
  kb_page_ids?: string[];
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

/**
 * A chunk (at most 8 MB) of an uploaded knowledge-base file
 * (capabilities/knowledge/storage/mongo-file-store.ts). `_id` is `{key}#{chunk}`; chunk 0
 * carries the metadata and is written last, so a file is whole once chunk 0
 * exists.
 */
export interface KbFileDoc {
  _id: string;
  key: string;
  chunk: number;
  chunks: number;
  content_type: string;
  filename: string;
  size: number;
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

/**
 * A channel (domain/channels.ts ChannelRecord, in `doc`). `origin` says who
 * wrote it last: the catalogue seed rewrites its own channels and leaves the
 * ones an operator created or edited alone; a deleted channel stays as a
 * tombstone so a later seed does not bring it back.
 */
export interface ChannelDoc {
  _id: string;
  doc: unknown;
  origin: 'seed' | 'api';
  deleted_at: Date | null;
  created_at: Date;
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
    owner_user_id: { type: String, default: null },
    created_at: Date,
  },
  opts,
);

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
  opts,
);

const MembershipSchema = new Schema<MembershipDoc>(
  { _id: String, enterprise_id: { type: String, index: true }, user_id: { type: String, index: true }, role: String, created_at: Date },
  opts,
);

const KbSchema = new Schema<KbDoc>(
  {
    _id: String, account_id: { type: String, index: true }, kb_id: String, name: String, kind: String,
    readers: { type: Schema.Types.Mixed, default: 'all' }, compiler: { type: String, default: 'rules' },
    compiler_model: { type: String, default: null }, deleted_at: { type: Date, default: null }, created_at: Date,
  },
  opts,
);

const KbDocumentSchema = new Schema<KbDocumentDoc>(
  {
    _id: String, account_id: String, kb_id: String, filename: String, content_type: String, content_hash: String,
    r2_key: String, size: Number, live_build_id: { type: String, default: null }, live_seq: { type: Number, default: 0 },
    deleted_seq: { type: Number, default: 0 }, deleted_at: { type: Date, default: null }, created_at: Date, updated_at: Date,
  },
  opts,
);
KbDocumentSchema.index({ account_id: 1, kb_id: 1 });

const PageSchema = new Schema<PageDoc>(
  {
    _id: String, page_id: { type: String, index: true }, account_id: String, kb_id: String, document_id: String,
    build_id: String, title: String, summary: String, tags: [String], aliases: [String], links: [String], body: String,
    confidence: Number, needs_review: Boolean, source: Schema.Types.Mixed, outgoing_links: Schema.Types.Mixed,
    link_requests: { type: Schema.Types.Mixed, default: undefined }, anchor: { type: String, default: '' }, ordinal: { type: Number, default: 0 },
    created_at: Date,
  },
  { ...opts, minimize: false },
);
PageSchema.index({ account_id: 1, kb_id: 1 });
PageSchema.index({ document_id: 1, build_id: 1 });

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
    recorded_at: Date,
    writer: { type: String, default: undefined },
    seq: { type: Number, default: undefined },
  },
  opts,
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
  opts,
);
WalletCheckpointSchema.index({ account_id: 1, upto: -1 });

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
    usage_estimated: { type: Boolean, default: false },
    latency_ms: { type: Number, default: 0 },
    request_id: String,
    task_id: { type: String, default: null },
    submitted_at: { type: Date, default: null },
    attempts_count: { type: Number, default: 1 },
    result_urls: { type: [String], default: [] },
    result_expires_at: { type: Date, default: null },
    attempts: { type: [Schema.Types.Mixed], default: undefined },
    agent_id: { type: String, default: null },
    kb_page_ids: { type: [String], default: undefined },
    created_at: Date,
  },
  opts,
);
UsageSchema.index({ account_id: 1, created_at: -1 });
UsageSchema.index({ agent_id: 1, created_at: -1 });
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
    callback_url: { type: String, default: undefined }, attempts_log: { type: [Schema.Types.Mixed], default: undefined },
    release_pending: { type: Boolean, default: undefined },
    created_at: Date, started_at: { type: Date, default: null }, completed_at: { type: Date, default: null }, updated_at: Date,
  },
  { ...opts, minimize: false },
);
TaskSchema.index({ account_id: 1, endpoint: 1, created_at: -1 });
/** The call log finds a task by its submission's request id (capabilities/calllog/service.ts). */
TaskSchema.index({ request_id: 1 });

const IdempotencySchema = new Schema<IdempotencyDoc>(
  {
    _id: String, account_id: String, body_hash: String, state: String, holder: String, until: Date,
    status: { type: Number, default: null }, headers: { type: Schema.Types.Mixed, default: null }, body: { type: String, default: null },
    not_cached: { type: Boolean, default: false }, created_at: Date,
  },
  opts,
);

const TaskFileSchema = new Schema<TaskFileDoc>({ _id: String, group: String, content_type: String, data: Buffer, created_at: Date }, opts);

const KbBuildSchema = new Schema<KbBuildDoc>(
  {
    _id: String, doc_seq: { type: String, unique: true }, account_id: String, kb_id: String, document_id: { type: String, index: true },
    seq: Number, filename: String, format: String, content_type: String, content_hash: String, r2_key: String, size: Number,
    compiler: String, model: String, state: String, pages_made: { type: Number, default: 0 },
    pages_done: { type: Number, default: 0 }, pages_total: { type: Number, default: null }, warnings: { type: [String], default: [] },
    error: { type: Schema.Types.Mixed, default: null }, created_at: Date, started_at: { type: Date, default: null },
    finished_at: { type: Date, default: null }, updated_at: Date,
  },
  { ...opts, minimize: false },
);

const KbIdClaimSchema = new Schema<KbIdClaimDoc>({ _id: String, account_id: String, created_at: Date }, opts);

const KbFileSchema = new Schema<KbFileDoc>(
  { _id: String, key: String, chunk: Number, chunks: Number, content_type: String, filename: String, size: Number, data: Buffer, created_at: Date },
  opts,
);

const CatalogueModelSchema = new Schema<CatalogueModelDoc>({ _id: String, doc: Schema.Types.Mixed, updated_at: Date }, opts);
const CatalogueRulesSchema = new Schema<CatalogueRulesDoc>({ _id: String, doc: Schema.Types.Mixed, updated_at: Date }, opts);
const ChannelSchema = new Schema<ChannelDoc>(
  { _id: String, doc: Schema.Types.Mixed, origin: String, deleted_at: { type: Date, default: null }, created_at: Date, updated_at: Date },
  // Keep empty objects (`capabilities: {}`): the record is read back as written.
  { ...opts, minimize: false },
);

export interface Db {
  conn: Connection;
  Account: Model<AccountDoc>;
  ApiKey: Model<ApiKeyDoc>;
  Ledger: Model<LedgerDoc>;
  Usage: Model<UsageDoc>;
  WalletAudit: Model<WalletAuditDoc>;
  WalletCheckpoint: Model<WalletCheckpointDoc>;
  Task: Model<TaskDoc>;
  Idempotency: Model<IdempotencyDoc>;
  TaskFile: Model<TaskFileDoc>;
  CatalogueModel: Model<CatalogueModelDoc>;
  CatalogueRules: Model<CatalogueRulesDoc>;
  Channel: Model<ChannelDoc>;
  User: Model<UserDoc>;
  Membership: Model<MembershipDoc>;
  Kb: Model<KbDoc>;
  KbDocument: Model<KbDocumentDoc>;
  Page: Model<PageDoc>;
  KbFile: Model<KbFileDoc>;
  KbBuild: Model<KbBuildDoc>;
  KbIdClaim: Model<KbIdClaimDoc>;
}

/** A connection (or the monitor's check) whose handshake gets no answer for this long is given up and tried again (not shorter: a heartbeat that times out interrupts the operations in flight, and a loaded dev store can be slow). */
export const CONNECT_TIMEOUT_MS = 10_000;

/** A process that starts while the store restarts waits this long for it (connection and indexes) before giving up. */
const STARTUP_WAIT_MS = 90_000;

/**
 * Mongoose builds each model's indexes in the background when the model is
 * registered and reports a failure as an 'error' event on the model; with no
 * listener that event is an uncaught exception, so a process that starts
 * while the store restarts would die. Every model gets a listener (this
 * plugin runs for every schema compiled on any connection, the agent models
 * included); connectMongo then builds the indexes again until they hold.
 */
mongoose.plugin((schema) => {
  schema.on('init', (model: Model<unknown>) => {
    if (model.listenerCount('error') === 0) model.on('error', () => undefined);
  });
});

export async function connectMongo(url: string, log?: Logger): Promise<Db> {
  const deadline = Date.now() + STARTUP_WAIT_MS;
  let conn: Connection;
  for (;;) {
    // maxPoolSize in the URL wins (the chaos run keeps FerretDB's writers few); 20 otherwise.
    // connectTimeoutMS (the driver's default is 30 s) also bounds the monitor's handshake: a store restarting
    // may accept the connection before it answers, and a monitor stuck on that handshake leaves the process
    // without a store for the whole timeout while the store is back (the chaos run saw one gateway's
    // operations fail server selection for 20 s after a 1 s restart). The URL's value wins here too.
    conn = mongoose.createConnection(url, {
      serverSelectionTimeoutMS: 10_000,
      ...(/[?&]maxPoolSize=/i.test(url) ? {} : { maxPoolSize: 20 }),
      ...(/[?&]connectTimeoutMS=/i.test(url) ? {} : { connectTimeoutMS: CONNECT_TIMEOUT_MS }),
    });
    try {
      await conn.asPromise();
      break;
    } catch (err) {
      await conn.close().catch(() => undefined);
      if (Date.now() > deadline) throw err;
      log?.warn('store not reachable at start; trying again', { err });
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  if (log) watchStoreOutages(conn, log);
  const db: Db = {
    conn,
    Account: conn.model('Account', AccountSchema, 'accounts'),
    ApiKey: conn.model('ApiKey', ApiKeySchema, 'api_keys'),
    Ledger: conn.model('Ledger', LedgerSchema, 'ledger'),
    Usage: conn.model('Usage', UsageSchema, 'usage'),
    WalletAudit: conn.model('WalletAudit', WalletAuditSchema, 'wallet_audits'),
    WalletCheckpoint: conn.model('WalletCheckpoint', WalletCheckpointSchema, 'wallet_checkpoints'),
    Task: conn.model('Task', TaskSchema, 'tasks'),
    Idempotency: conn.model('Idempotency', IdempotencySchema, 'idempotency'),
    TaskFile: conn.model('TaskFile', TaskFileSchema, 'task_files'),
    CatalogueModel: conn.model('CatalogueModel', CatalogueModelSchema, 'catalogue_models'),
    CatalogueRules: conn.model('CatalogueRules', CatalogueRulesSchema, 'catalogue_rules'),
    Channel: conn.model('Channel', ChannelSchema, 'channels'),
    User: conn.model('User', UserSchema, 'users'),
    Membership: conn.model('Membership', MembershipSchema, 'memberships'),
    Kb: conn.model('Kb', KbSchema, 'kbs'),
    KbDocument: conn.model('KbDocument', KbDocumentSchema, 'kb_documents'),
    Page: conn.model('Page', PageSchema, 'kb_pages'),
    KbFile: conn.model('KbFile', KbFileSchema, 'kb_files'),
    KbBuild: conn.model('KbBuild', KbBuildSchema, 'kb_builds'),
    KbIdClaim: conn.model('KbIdClaim', KbIdClaimSchema, 'kb_id_claims'),
  };
  // Every model's indexes (unique ones are this store's only atomic claims) exist before the process serves.
  await Promise.all(Object.values(db).filter((m): m is Model<never> => typeof m === 'function').map((m) => buildIndexes(m, deadline, log)));
  return db;
}

/** The model's background index build; if it failed (the store restarted meanwhile), built again until the deadline. */
async function buildIndexes(model: Model<never>, deadline: number, log?: Logger): Promise<void> {
  try {
    await model.init();
    return;
  } catch (err) {
    log?.warn('store indexes not built; trying again', { model: model.modelName, err });
  }
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    try {
      await model.createIndexes();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
}

/**
 * One warning when the driver loses the store (a failed heartbeat) and one
 * line when it is back, with how long it was gone. Operations meanwhile wait
 * for server selection (serverSelectionTimeoutMS) and then fail on their own.
 */
function watchStoreOutages(conn: Connection, log: Logger): void {
  let downSince: number | null = null;
  conn.on('disconnected', () => {
    if (downSince !== null) return;
    downSince = Date.now();
    log.warn('store unreachable; operations wait for it, then fail');
  });
  conn.on('reconnected', () => {
    if (downSince === null) return;
    log.warn('store reachable again', { down_ms: Date.now() - downSince });
    downSince = null;
  });
  conn.on('error', (err) => log.warn('store connection error', { err }));
}

/** True for a duplicate-key error from a unique index (MongoDB and FerretDB both use 11000). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
