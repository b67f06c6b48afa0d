/**
 * Limits of the batch capability (docs/batches.md). A request past one is a 400 that names it.
 */
export const BATCH_LIMITS = {
  /** Lines (requests) in one batch. */
  maxLines: 10_000,
  /** Bytes of one uploaded batch input file (and of one Message Batches request body). */
  maxFileBytes: 20 * 1024 * 1024,
  /** Bytes of one line of an input file. */
  maxLineBytes: 1024 * 1024,
  /** An uploaded file, and a batch's output and error files, are kept this long. */
  fileTtlMs: 30 * 24 * 3600 * 1000,
  /** A batch's completion window: lines not run by then end as expired. */
  completionWindowMs: 24 * 3600 * 1000,
  /** Message Batches results stay readable this long after the batch was created (Anthropic: 29 days). */
  resultsTtlMs: 29 * 24 * 3600 * 1000,
  /** custom_id length. */
  maxCustomIdLength: 64,
} as const;

/** Endpoints a batch line may call (OpenAI Batches `endpoint`; Message Batches lines call /v1/messages). */
export const OPENAI_BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses'] as const;
export type BatchEndpoint = (typeof OPENAI_BATCH_ENDPOINTS)[number] | '/v1/messages';

/** Name of workflows/batch.ts `batchWorkflow`: the gateway starts it by name (workflowId = batch id). */
export const BATCH_WORKFLOW = 'batchWorkflow';
