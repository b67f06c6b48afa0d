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
  docOptions,
);
UsageSchema.index({ account_id: 1, created_at: -1 });
UsageSchema.index({ agent_id: 1, created_at: -1 });
UsageSchema.index({ key_id: 1, created_at: -1 });

export interface UsageModels {
  Usage: Model<UsageDoc>;
}

/** The collections on a connection (registered once per connection; capabilities/store.ts opens them at start). */
export function usageModels(conn: Connection): UsageModels {
  return {
    Usage: modelOn(conn, 'Usage', UsageSchema, 'usage'),
  };
}
