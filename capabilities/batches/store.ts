import { Schema, type Connection, type Model } from 'mongoose';
import { docOptions, modelOn } from '../../platform/mongo';
import type { BatchEndpoint } from './limits';

/** An uploaded file (purpose=batch, JSONL) or a batch's output / error file (content built from its lines). */
export interface BatchFileDoc {
  _id: string;
  account_id: string;
  key_id: string;
  purpose: 'batch' | 'batch_output';
  filename: string;
  bytes: number;
  /** Uploaded content; null for an output or error file (built from the batch's lines when read). */
  content: string | null;
  /** Output and error files: their batch and which of the two. */
  batch_id: string | null;
  role: 'input' | 'output' | 'error';
  /** A Message Batch's requests, kept as its input: the batch's own, never an account's file (not listed, 404 by id). */
  hidden?: boolean;
  created_at: Date;
  expires_at: Date;
  deleted_at: Date | null;
}

export type BatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';

export interface BatchDoc {
  _id: string;
  account_id: string;
  key_id: string;
  /** Which API created it: OpenAI Batches or Anthropic Message Batches (its views and result shapes). */
  api: 'openai' | 'anthropic';
  endpoint: BatchEndpoint;
  input_file_id: string;
  completion_window: string;
  metadata: Record<string, string> | null;
  status: BatchStatus;
  total: number;
  completed: number;
  failed: number;
  output_file_id: string | null;
  error_file_id: string | null;
  /** Sum of the lines' charges (nano): the finished slices' as the batch runs, every line's once final. */
  cost_nano: number;
  /** Each finished slice's counts, by its first line (capabilities/batches/progress.ts `reportSlice`). */
  slice_counts?: Record<string, { completed: number; failed: number; costNano: number }>;
  created_at: Date;
  in_progress_at: Date | null;
  finalizing_at: Date | null;
  completed_at: Date | null;
  expires_at: Date;
  expired_at: Date | null;
  cancelling_at: Date | null;
  cancelled_at: Date | null;
  /** Where Message Batches results are read (an absolute URL, as Anthropic answers). */
  results_base: string | null;
}

/** One line's outcome: written once (unique _id = batch id + line index); a line that has one is never run again. */
export interface BatchLineDoc {
  _id: string;
  batch_id: string;
  index: number;
  custom_id: string;
  /** The gateway's answer: HTTP status, request id, JSON body. `status_code` 0: not run (cancelled or expired). */
  status_code: number;
  request_id: string | null;
  body: unknown;
  cost_nano: number;
  created_at: Date;
}

export interface BatchModels {
  File: Model<BatchFileDoc>;
  Batch: Model<BatchDoc>;
  Line: Model<BatchLineDoc>;
}


const opts = { ...docOptions, minimize: false } as const;
const BatchFileSchema = new Schema<BatchFileDoc>({
  _id: String, account_id: { type: String, index: true }, key_id: String, purpose: String, filename: String, bytes: Number,
  content: { type: String, default: null }, batch_id: { type: String, default: null }, role: String, hidden: Boolean,
  created_at: Date, expires_at: Date, deleted_at: { type: Date, default: null },
}, opts);
const BatchSchema = new Schema<BatchDoc>({
  _id: String, account_id: { type: String, index: true }, key_id: String, api: String, endpoint: String, input_file_id: String,
  completion_window: String, metadata: { type: Schema.Types.Mixed, default: null }, status: String,
  total: Number, completed: Number, failed: Number, output_file_id: { type: String, default: null }, error_file_id: { type: String, default: null },
  cost_nano: { type: Number, default: 0 },
  created_at: Date, in_progress_at: { type: Date, default: null }, finalizing_at: { type: Date, default: null }, completed_at: { type: Date, default: null },
  expires_at: Date, expired_at: { type: Date, default: null }, cancelling_at: { type: Date, default: null }, cancelled_at: { type: Date, default: null },
  results_base: { type: String, default: null }, slice_counts: { type: Schema.Types.Mixed, default: undefined },
}, opts);
const BatchLineSchema = new Schema<BatchLineDoc>({
  _id: String, batch_id: String, index: Number, custom_id: String, status_code: Number,
  request_id: { type: String, default: null }, body: Schema.Types.Mixed, cost_nano: { type: Number, default: 0 }, created_at: Date,
}, opts);
/** A batch's lines (the end's count, the results) and a slice's lines by position. */
BatchLineSchema.index({ batch_id: 1, index: 1 });

/** The batch collections on a connection (registered once per connection). */
export function batchModels(conn: Connection): BatchModels {
  return {
    File: modelOn(conn, 'BatchFile', BatchFileSchema, 'batch_files'),
    Batch: modelOn(conn, 'Batch', BatchSchema, 'batches'),
    Line: modelOn(conn, 'BatchLine', BatchLineSchema, 'batch_lines'),
  };
}

export const lineId = (batchId: string, index: number) => `${batchId}:${String(index).padStart(6, '0')}`;

/** `status_code` of a line's record that says it was never run (the batch was cancelled or expired first). */
export const NOT_RUN = 0;
