import { z } from 'zod';
import { CreateBatchBody, CreateMessageBatchBody, FilesListQuery, ListQuery } from '../../../capabilities/batches/schemas';
import { BATCH_LIMITS } from '../../../capabilities/batches/limits';
import { KEY_ERRORS, type Operation } from '../registry';

/**
 * OpenAI Files and Batches (errors in the OpenAI shape) and Anthropic Message
 * Batches (errors in the Anthropic shape), gateway/routes/batches.ts and docs/batches.md.
 * The response schemas follow `fileView`, `openAiBatchView` and `anthropicBatchView`
 * of capabilities/batches/service.ts.
 */

const Id = z.object({ id: z.string().min(1) });
const nullableTime = z.number().int().nullable();
const nullableIso = z.string().nullable();
const COST = z.string().meta({ description: 'Beyond the protocol\'s object (SDKs ignore it): what the batch was charged so far, in credits' });

/** Multipart upload of `POST /v1/files`. */
const UploadFileBody = z.object({
  file: z.string().meta({ format: 'binary', description: `The JSONL input file: one \`{custom_id, method: "POST", url, body}\` per line; at most ${BATCH_LIMITS.maxLines} lines, ${BATCH_LIMITS.maxFileBytes} bytes, ${BATCH_LIMITS.maxLineBytes} bytes a line` }),
  purpose: z.literal('batch').meta({ description: 'The only purpose this gateway stores files for' }),
});

/** The OpenAI File object. */
const FileObject = z.looseObject({
  id: z.string(), object: z.literal('file'), bytes: z.number().int(), created_at: z.number().int(), expires_at: nullableTime,
  filename: z.string(), purpose: z.enum(['batch', 'batch_output']).meta({ description: '`batch`: an uploaded input file; `batch_output`: a batch\'s output or error file' }), status: z.literal('processed'), status_details: z.null(),
});
const FileList = z.looseObject({ object: z.literal('list'), data: z.array(FileObject), first_id: z.string().nullable(), last_id: z.string().nullable(), has_more: z.boolean() });
const FileDeleted = z.looseObject({ id: z.string(), object: z.literal('file'), deleted: z.literal(true) });

/** The OpenAI Batch object. */
const BatchObject = z.looseObject({
  id: z.string(), object: z.literal('batch'), endpoint: z.string(), errors: z.null(), input_file_id: z.string(), completion_window: z.string(),
  status: z.enum(['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled']),
  output_file_id: z.string().nullable(), error_file_id: z.string().nullable(),
  created_at: z.number().int(), in_progress_at: nullableTime, expires_at: nullableTime, finalizing_at: nullableTime,
  completed_at: nullableTime, failed_at: nullableTime, expired_at: nullableTime, cancelling_at: nullableTime, cancelled_at: nullableTime,
  request_counts: z.object({ total: z.number().int(), completed: z.number().int(), failed: z.number().int() }),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  cost: COST,
});
const BatchList = z.looseObject({ object: z.literal('list'), data: z.array(BatchObject), first_id: z.string().nullable(), last_id: z.string().nullable(), has_more: z.boolean() });

/** The Anthropic Message Batch object. */
const MessageBatch = z.looseObject({
  id: z.string(), type: z.literal('message_batch'), processing_status: z.enum(['in_progress', 'canceling', 'ended']),
  request_counts: z.object({ processing: z.number().int(), succeeded: z.number().int(), errored: z.number().int(), canceled: z.number().int(), expired: z.number().int() }),
  ended_at: nullableIso, created_at: z.string(), expires_at: nullableIso, archived_at: z.null(), cancel_initiated_at: nullableIso,
  results_url: z.string().nullable().meta({ description: 'Set once the batch has ended' }),
  cost: COST,
});
const MessageBatchList = z.looseObject({ data: z.array(MessageBatch), has_more: z.boolean(), first_id: z.string().nullable(), last_id: z.string().nullable() });

const OpenAiListQuery = ListQuery.pick({ limit: true, after: true });
const AnthropicListQuery = ListQuery.pick({ limit: true, after_id: true });

const ANTHROPIC_VERSION = { name: 'anthropic-version', description: 'Protocol version, a date such as 2023-06-01 (the SDKs send it)', schema: { type: 'string', example: '2023-06-01' } };

const files = (op: Omit<Operation, 'tag' | 'auth' | 'errors'>): Operation => ({ tag: 'Batches', auth: 'key', errors: 'openai', ...op });
const messages = (op: Omit<Operation, 'tag' | 'auth' | 'errors'>): Operation => ({ tag: 'Batches', auth: 'key', errors: 'anthropic', headers: [ANTHROPIC_VERSION], ...op });

export const batchOperations: Operation[] = [
  files({
    method: 'post', path: '/v1/files', operationId: 'uploadFile', summary: 'Upload a batch input file',
    description: `multipart/form-data with the fields \`file\` (JSONL) and \`purpose=batch\`; every line is checked at upload, the first bad one named with its line number (400, \`param: file\`). Kept ${BATCH_LIMITS.fileTtlMs / 86_400_000} days.`,
    errorStatuses: [...KEY_ERRORS, 413],
    body: { schema: UploadFileBody, multipart: 'only' },
    responses: { 200: { description: 'The file', schema: FileObject } },
  }),
  files({
    method: 'get', path: '/v1/files', operationId: 'listFiles', summary: 'List files (batch inputs and outputs)',
    description: 'Newest first (`order=asc`: oldest first), up to `limit` files; while `has_more`, the next page is `after=<last_id>`. An `after` that is not one of the account\'s files is a 400 (`param: after`).',
    errorStatuses: KEY_ERRORS, query: FilesListQuery,
    responses: { 200: { description: 'A page of files', schema: FileList } },
  }),
  files({
    method: 'get', path: '/v1/files/{id}', operationId: 'getFile', summary: 'Get a file',
    errorStatuses: [...KEY_ERRORS, 404], params: Id,
    responses: { 200: { description: 'The file', schema: FileObject } },
  }),
  files({
    method: 'get', path: '/v1/files/{id}/content', operationId: 'getFileContent', summary: 'Download a file\'s content',
    description: 'An input file as uploaded; a batch\'s output or error file as one `{id, custom_id, response: {status_code, request_id, body} | null, error: {code, message} | null}` per line. Answered as `application/jsonl`.',
    errorStatuses: [...KEY_ERRORS, 404], params: Id,
    responses: { 200: { description: 'JSONL', contentType: 'application/jsonl' } },
  }),
  files({
    method: 'delete', path: '/v1/files/{id}', operationId: 'deleteFile', summary: 'Delete a file',
    description: 'The file is 404 and unlisted at once, and no new batch can use it. Deleting a batch\'s input file does not touch the batch: one still running runs to its end, and the output and error files of every batch that used it keep their content for their whole retention. Deleting an output or error file deletes that file only.',
    errorStatuses: [...KEY_ERRORS, 404], params: Id,
    responses: { 200: { description: 'Deleted', schema: FileDeleted } },
  }),

  files({
    method: 'post', path: '/v1/batches', operationId: 'createBatch', summary: 'Create a batch (OpenAI)',
    description: 'Runs every line of the input file as a live call of `endpoint`, each billed once, on a durable workflow; the balance must be positive to start. Poll with GET /v1/batches/{id}.',
    errorStatuses: [400, 401, 402, 413, 429, 500], body: { schema: CreateBatchBody, example: { input_file_id: 'file-abc123', endpoint: '/v1/chat/completions', completion_window: '24h' } },
    responses: { 200: { description: 'The batch', schema: BatchObject } },
  }),
  files({
    method: 'get', path: '/v1/batches', operationId: 'listBatches', summary: 'List batches (OpenAI)',
    errorStatuses: KEY_ERRORS, query: OpenAiListQuery,
    responses: { 200: { description: 'Newest first; page with `after`', schema: BatchList } },
  }),
  files({
    method: 'get', path: '/v1/batches/{id}', operationId: 'getBatch', summary: 'Get a batch (OpenAI)',
    errorStatuses: [...KEY_ERRORS, 404], params: Id,
    responses: { 200: { description: 'The batch with its `request_counts`', schema: BatchObject } },
  }),
  files({
    method: 'post', path: '/v1/batches/{id}/cancel', operationId: 'cancelBatch', summary: 'Cancel a batch (OpenAI)',
    description: 'Lines not yet run are not run; the batch goes `cancelling`, then `cancelled`. A batch that has ended is answered as it is.',
    errorStatuses: [...KEY_ERRORS, 404], params: Id,
    responses: { 200: { description: 'The batch', schema: BatchObject } },
  }),

  messages({
    method: 'post', path: '/v1/messages/batches', operationId: 'createMessageBatch', summary: 'Create a Message Batch (Anthropic)',
    description: `Each request is a /v1/messages call, run live and billed once. At most ${BATCH_LIMITS.maxLines} requests and ${BATCH_LIMITS.maxFileBytes} bytes.`,
    errorStatuses: [400, 401, 402, 413, 429, 500],
    body: { schema: CreateMessageBatchBody, example: { requests: [{ custom_id: 'r1', params: { model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] } }] } },
    responses: { 200: { description: 'The message batch', schema: MessageBatch } },
  }),
  messages({
    method: 'get', path: '/v1/messages/batches', operationId: 'listMessageBatches', summary: 'List Message Batches (Anthropic)',
    errorStatuses: KEY_ERRORS, query: AnthropicListQuery,
    responses: { 200: { description: 'Newest first; page with `after_id`', schema: MessageBatchList } },
  }),
  messages({
    method: 'get', path: '/v1/messages/batches/{id}', operationId: 'getMessageBatch', summary: 'Get a Message Batch (Anthropic)',
    errorStatuses: [...KEY_ERRORS, 404], params: Id,
    responses: { 200: { description: 'The message batch with its `request_counts`', schema: MessageBatch } },
  }),
  messages({
    method: 'get', path: '/v1/messages/batches/{id}/results', operationId: 'getMessageBatchResults', summary: 'Message Batch results (Anthropic)',
    description: 'One `{custom_id, result: {type: succeeded, message} | {type: errored, error} | {type: canceled} | {type: expired}}` per line, in input order: the requests run so far while the batch runs, every request once it has ended.',
    errorStatuses: [...KEY_ERRORS, 404], params: Id,
    responses: { 200: { description: 'JSONL', contentType: 'application/x-jsonl' } },
  }),
  messages({
    method: 'post', path: '/v1/messages/batches/{id}/cancel', operationId: 'cancelMessageBatch', summary: 'Cancel a Message Batch (Anthropic)',
    description: 'Requests not yet run end as `canceled`; `processing_status` goes `canceling`, then `ended`.',
    errorStatuses: [...KEY_ERRORS, 404], params: Id,
    responses: { 200: { description: 'The message batch', schema: MessageBatch } },
  }),
];
