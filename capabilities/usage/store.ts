import { Schema, type Connection, type Model } from 'mongoose';
import { docOptions, modelOn } from '../../platform/mongo';
import type { CallAttempt } from '../../domain/call-attempts';

/**
 * The usage rows: one per call or task, what the call log and the usage
 * queries read.
 */

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

const UsageSchema = new Schema<UsageDoc>(
  {
    _id: String,
    // account_id alone needs no index of its own: (account_id, created_at) serves it.
    account_id: String,
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
  docOptions,
);
UsageSchema.index({ account_id: 1, created_at: -1 });
UsageSchema.index({ agent_id: 1, created_at: -1 });
UsageSchema.index({ key_id: 1, created_at: -1 });

/**
 * What a row holds when its writer left a field out. Rows are written without
 * the fields at these values (a chat call's row carries about half of its
 * fields; the store's work per row grows with its fields, and the row also
 * travels through the ledger journal), and every read fills them back in:
 * `find`/`findOne` results here, cursors through `withUsageDefaults`. A query
 * for a default (`{ task_id: null }`) matches a missing field in MongoDB and
 * FerretDB alike.
 */
export const USAGE_DEFAULTS: Readonly<Omit<UsageDoc, '_id' | 'account_id' | 'endpoint' | 'status' | 'request_id' | 'created_at' | 'attempts' | 'kb_page_ids'>> = {
  key_id: null, key_name: null, key_prefix: null, model: null, error_code: null, error_message: null,
  input_tokens: 0, output_tokens: 0, cached_tokens: 0, server_tool_calls: 0, unit_count: 0, unit_type: null,
  cost_nano: 0, reserved_nano: 0, latency_ms: 0, task_id: null, submitted_at: null, attempts_count: 1,
  result_urls: [], result_expires_at: null, usage_estimated: false, agent_id: null,
};

/** A row as written: what its writer set, without the fields at their defaults, and its time. */
export type StoredUsage = Partial<UsageDoc> & Pick<UsageDoc, '_id' | 'account_id' | 'endpoint' | 'status' | 'request_id' | 'created_at'>;

/** A row as read: the fields its writer left out at their defaults. */
export function withUsageDefaults<T extends object>(doc: T): T {
  for (const [k, v] of Object.entries(USAGE_DEFAULTS)) {
    if ((doc as Record<string, unknown>)[k] === undefined) (doc as Record<string, unknown>)[k] = Array.isArray(v) ? [] : v;
  }
  return doc;
}

// Lean reads get the defaults too (hydrated documents have them from the schema).
UsageSchema.post(['find', 'findOne'], function (res: unknown) {
  if (Array.isArray(res)) for (const d of res) withUsageDefaults(d as object);
  else if (res && typeof res === 'object') withUsageDefaults(res);
});

export interface UsageModels {
  Usage: Model<UsageDoc>;
}

/** The collections on a connection (registered once per connection; capabilities/store.ts opens them at start). */
export function usageModels(conn: Connection): UsageModels {
  return {
    Usage: modelOn(conn, 'Usage', UsageSchema, 'usage'),
  };
}
