import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import pRetry from 'p-retry';
import { GatewayError, errors } from '../../domain/errors';
import { taskQueueFor } from '../../domain/task-queues';
import type { AuthState } from '../../domain/api-key';
import type { MongoConn } from '../../platform/mongo';
import { formatCredits } from '../../domain/money';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import type { Model } from 'mongoose';
import { isDuplicateKey } from '../../platform/mongo';
import { batchModels, lineId, NOT_RUN, type BatchDoc, type BatchFileDoc, type BatchLineDoc, type BatchModels } from './store';
import { BATCH_LIMITS, BATCH_WORKFLOW, type BatchEndpoint } from './limits';
import { limitError, linesToJsonl, parseOpenAiLines, type LineInput } from './schemas';
import type { BatchWorkflowInput } from '../../workflows/batch';

const hex = () => randomBytes(12).toString('hex');
const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** The batch engine's records: files, batches, each line's outcome (capabilities/batches/store.ts). */
export class BatchService {
  readonly store: BatchModels;
  constructor(private readonly deps: { db: MongoConn; temporal: Client; config: Config; log: Logger }) {
    this.store = batchModels(deps.db.conn);
  }

  // ---- files

  async uploadFile(auth: AuthState, filename: string, data: Buffer, purpose: string): Promise<BatchFileDoc> {
    if (purpose !== 'batch') throw limitError(`purpose must be 'batch' (the only purpose this gateway stores files for), got '${purpose}'`, 'purpose');
    if (data.length > BATCH_LIMITS.maxFileBytes) throw limitError(`the file is ${data.length} bytes; the limit of a batch input file is ${BATCH_LIMITS.maxFileBytes} bytes`, 'file');
    const content = data.toString('utf8');
    parseOpenAiLines(content); // every line checked now: a bad file is a 400 at upload, naming the line
    const now = new Date();
    const doc: BatchFileDoc = {
      _id: `file-${hex()}`, account_id: auth.account.id, key_id: auth.key.id, purpose: 'batch', filename, bytes: data.length, content,
      batch_id: null, role: 'input', created_at: now, expires_at: new Date(now.getTime() + BATCH_LIMITS.fileTtlMs), deleted_at: null,
    };
    await this.store.File.collection.insertOne(doc as never);
    return doc;
  }

  async file(accountId: string, id: string): Promise<BatchFileDoc> {
    const doc = await this.store.File.findById(id).lean<BatchFileDoc>();
    if (!doc || doc.account_id !== accountId || doc.deleted_at || doc.hidden || doc.expires_at.getTime() < Date.now()) throw errors.notFound(`no file '${id}'`);
    return doc;
  }

  async listFiles(accountId: string, q: { limit: number; after?: string; order: 'asc' | 'desc'; purpose?: string }): Promise<{ items: BatchFileDoc[]; hasMore: boolean }> {
    const filter: Record<string, unknown> = { account_id: accountId, deleted_at: null, hidden: { $ne: true } };
    if (q.purpose) filter.purpose = q.purpose;
    const page = await pageOf<BatchFileDoc>(this.store.File, accountId, filter, q.limit, q.after, q.order, { content: 0 });
    if (!page) throw limitError(`no file '${q.after}' to page after (pass the \`last_id\` of the previous page)`, 'after');
    return page;
  }

  /**
   * The file is gone for the account at once (404, not listed, no new batch from it). Deleting a batch's
   * output or error file deletes that file only. Deleting an input file never touches a batch: one still
   * running keeps reading its lines and runs to its end, and the result files of every batch that used it
   * keep their content (`releaseInput`); its content is erased once no batch needs it.
   */
  async deleteFile(accountId: string, id: string): Promise<void> {
    const doc = await this.file(accountId, id);
    await this.store.File.updateOne({ _id: id, deleted_at: null }, { $set: { deleted_at: new Date() } });
    if (doc.role === 'input') await releaseInput(this.store, id);
  }

  /** A file's content: an upload as stored; a batch's output or error file built from its lines' outcomes. */
  async fileContent(accountId: string, id: string): Promise<string> {
    const doc = await this.file(accountId, id);
    if (doc.role === 'input') return doc.content ?? '';
    const batch = await this.batchDoc(accountId, doc.batch_id!);
    return resultFileText(batch, doc.role === 'output' ? 'output' : 'error', await batchOutcomes(this.store, batch));
  }

  // ---- batches

  async createBatch(auth: AuthState, body: { input_file_id: string; endpoint: BatchEndpoint; completion_window: string; metadata?: Record<string, string> | null }): Promise<BatchDoc> {
    const file = await this.file(auth.account.id, body.input_file_id).catch(() => {
      throw limitError(`no input file '${body.input_file_id}' (upload it with POST /v1/files, purpose=batch)`, 'input_file_id');
    });
    if (file.role !== 'input') throw limitError(`file '${file._id}' is a batch's output, not an input file`, 'input_file_id');
    const lines = parseOpenAiLines(file.content ?? '');
    const other = lines.findIndex((l) => l.url !== body.endpoint);
    if (other !== -1) throw limitError(`line ${other + 1} calls ${lines[other].url}, but the batch's endpoint is ${body.endpoint}: every line must call the batch's endpoint`, 'input_file_id');
    return this.start(auth, { api: 'openai', id: `batch_${hex()}`, endpoint: body.endpoint, inputFileId: file._id, total: lines.length, metadata: body.metadata ?? null, window: body.completion_window });
  }

  /** Message Batches: the requests come in the body; they are kept as the batch's input file (not listed). */
  async createMessageBatch(auth: AuthState, requests: Array<{ custom_id: string; params: Record<string, unknown> }>, resultsBase: string): Promise<BatchDoc> {
    if (requests.length > BATCH_LIMITS.maxLines) throw limitError(`${requests.length} requests; the limit of requests per batch is ${BATCH_LIMITS.maxLines}`, 'requests');
    const seen = new Set<string>();
    for (const [i, r] of requests.entries()) {
      if (seen.has(r.custom_id)) throw limitError(`requests.${i}.custom_id '${r.custom_id}' is used twice; each request needs its own`, `requests.${i}.custom_id`);
      seen.add(r.custom_id);
    }
    const lines: LineInput[] = requests.map((r) => ({ custom_id: r.custom_id, url: '/v1/messages', body: r.params }));
    const content = linesToJsonl(lines);
    const now = new Date();
    const fileId = `file-${hex()}`;
    await this.store.File.collection.insertOne({
      _id: fileId, account_id: auth.account.id, key_id: auth.key.id, purpose: 'batch', filename: 'message-batch.jsonl', bytes: Buffer.byteLength(content), content,
      batch_id: null, role: 'input', hidden: true, created_at: now, expires_at: new Date(now.getTime() + BATCH_LIMITS.fileTtlMs), deleted_at: null,
    } as never);
    return this.start(auth, { api: 'anthropic', id: `msgbatch_${hex()}`, endpoint: '/v1/messages', inputFileId: fileId, total: lines.length, metadata: null, window: '24h', resultsBase });
  }

  private async start(auth: AuthState, b: { api: BatchDoc['api']; id: string; endpoint: BatchEndpoint; inputFileId: string; total: number; metadata: Record<string, string> | null; window: string; resultsBase?: string }): Promise<BatchDoc> {
    const now = new Date();
    const doc: BatchDoc = {
      _id: b.id, account_id: auth.account.id, key_id: auth.key.id, api: b.api, endpoint: b.endpoint, input_file_id: b.inputFileId,
      completion_window: b.window, metadata: b.metadata, status: 'validating', total: b.total, completed: 0, failed: 0,
      output_file_id: null, error_file_id: null, cost_nano: 0, created_at: now, in_progress_at: null, finalizing_at: null, completed_at: null,
      expires_at: new Date(now.getTime() + BATCH_LIMITS.completionWindowMs), expired_at: null, cancelling_at: null, cancelled_at: null,
      results_base: b.resultsBase ?? null,
    };
    await this.store.Batch.collection.insertOne(doc as never);
    // An input deleted while this batch was being created: the deletion checks for batches that still need
    // the file after marking it deleted, and this checks the file after recording the batch, so one of the
    // two sees the other and the file's content is never erased under a batch that will run.
    const input = await this.store.File.findById(b.inputFileId, { deleted_at: 1 }).lean<Pick<BatchFileDoc, 'deleted_at'>>();
    if (!input || input.deleted_at) {
      await this.store.Batch.deleteOne({ _id: doc._id });
      throw limitError(`no input file '${b.inputFileId}' (it was deleted)`, 'input_file_id');
    }
    // workflowId = batch id: starting twice is refused, so a retried start is harmless.
    await pRetry(async () => {
      try {
        await this.deps.temporal.workflow.start(BATCH_WORKFLOW, { taskQueue: taskQueueFor(this.deps.config.TEMPORAL_TASK_QUEUE, 'batchWorkflow'), workflowId: doc._id, args: [{ batchId: doc._id } satisfies BatchWorkflowInput] });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }, { retries: 4, minTimeout: 200 }).catch(async (err: unknown) => {
      await this.store.Batch.updateOne({ _id: doc._id }, { $set: { status: 'failed', completed_at: new Date() } }).catch(() => undefined);
      throw new GatewayError('internal_error', 'the batch could not be started (the workflow service is briefly unavailable); nothing was run, retry', { headers: { 'retry-after': '1' }, cause: err });
    });
    return doc;
  }

  async batchDoc(accountId: string, id: string, api?: BatchDoc['api']): Promise<BatchDoc> {
    const doc = await this.store.Batch.findById(id).lean<BatchDoc>();
    if (!doc || doc.account_id !== accountId || (api && doc.api !== api)) throw errors.notFound(`no ${api === 'anthropic' ? 'message batch' : 'batch'} '${id}'`);
    return doc;
  }

  async listBatches(accountId: string, api: BatchDoc['api'], limit: number, after?: string): Promise<{ items: BatchDoc[]; hasMore: boolean }> {
    const q: Record<string, unknown> = { account_id: accountId, api };
    // An unknown cursor reads the first page, as it always has.
    const page = await pageOf<BatchDoc>(this.store.Batch, accountId, q, limit, after, 'desc');
    return page ?? (await pageOf<BatchDoc>(this.store.Batch, accountId, q, limit, undefined, 'desc'))!;
  }

  /** Stop new lines: the workflow is told, lines in flight finish and are billed, the output holds what finished. */
  async cancel(accountId: string, id: string, api: BatchDoc['api']): Promise<BatchDoc> {
    const doc = await this.batchDoc(accountId, id, api);
    if (FINAL.has(doc.status) || doc.status === 'cancelling') return doc;
    const now = new Date();
    await this.store.Batch.updateOne({ _id: id, status: { $in: ['validating', 'in_progress', 'finalizing'] } }, { $set: { status: 'cancelling', cancelling_at: now } });
    await this.deps.temporal.workflow.getHandle(id).signal('cancel').catch((err: unknown) => {
      // The workflow reads the status before every line too: a lost signal only delays the stop.
      this.deps.log.warn('batch cancel signal not delivered', { batch: id, err });
    });
    return this.batchDoc(accountId, id, api);
  }

  async messageResults(accountId: string, id: string): Promise<string> {
    const batch = await this.batchDoc(accountId, id, 'anthropic');
    const out = await batchOutcomes(this.store, batch);
    const final = FINAL.has(batch.status);
    return out.filter((o) => o.line || final).map((o) => JSON.stringify(anthropicResult(batch, o))).join('\n') + '\n';
  }
}

export interface Outcome {
  index: number;
  custom_id: string;
  line?: BatchLineDoc;
}

/**
 * Every line of a batch with its outcome (none: not run), in input order. The recorded lines carry their
 * own custom_id; only lines with no record (not run yet, or never) are named from the input file, so a
 * batch's results do not depend on its input once every line has a record (`releaseInput` writes the
 * records of the lines never run before an input's content is erased). A line with neither (an input
 * erased before this was so) is left out: it was never run, and its custom_id is gone.
 */
export async function batchOutcomes(store: BatchModels, batch: BatchDoc): Promise<Outcome[]> {
  const done = await store.Line.find({ batch_id: batch._id }).lean<BatchLineDoc[]>();
  const byIndex = new Map(done.map((d) => [d.index, d]));
  let input: Array<{ custom_id: string }> = [];
  if (done.length < batch.total) {
    const file = await store.File.findById(batch.input_file_id, { content: 1 }).lean<Pick<BatchFileDoc, 'content'>>();
    input = file?.content ? await customIdsOf(file.content) : [];
  }
  const out: Outcome[] = [];
  for (let index = 0; index < batch.total; index++) {
    const d = byIndex.get(index);
    const custom_id = d?.custom_id ?? input[index]?.custom_id;
    if (custom_id === undefined) continue;
    out.push({ index, custom_id, line: d && d.status_code !== NOT_RUN ? d : undefined });
  }
  return out;
}

/**
 * An input file the account deleted loses its content once no batch needs it: while a batch that uses it
 * has not ended, nothing (that batch's end calls this again); then each ended batch gets a record of every
 * line it never ran (with its custom_id, what its error file and results name), and the content is erased.
 * The deletion and a batch's end each write their own state before reading the other's, so the last of
 * them erases it. Called by the deletion and by a batch's end (activities/batch.ts `finishBatch`).
 */
export async function releaseInput(store: BatchModels, fileId: string): Promise<void> {
  const file = await store.File.findById(fileId).lean<BatchFileDoc>();
  if (!file || !file.deleted_at || file.role !== 'input' || file.content === null) return;
  const batches = await store.Batch.find({ account_id: file.account_id, input_file_id: fileId }).lean<BatchDoc[]>();
  if (batches.some((b) => !FINAL.has(b.status))) return;
  // The input is read only when a batch left lines without a record (cancelled or expired): a batch that ran
  // every line needs nothing of it.
  let lines: Array<{ custom_id: string }> | undefined;
  for (const b of batches) {
    const done = new Set((await store.Line.find({ batch_id: b._id }, { index: 1 }).lean<Array<{ index: number }>>()).map((d) => d.index));
    if (done.size >= b.total) continue;
    lines ??= await customIdsOf(file.content);
    const now = new Date();
    const missing: BatchLineDoc[] = [];
    for (let index = 0; index < Math.min(b.total, lines.length); index++) {
      if (done.has(index)) continue;
      missing.push({ _id: lineId(b._id, index), batch_id: b._id, index, custom_id: lines[index].custom_id, status_code: NOT_RUN, request_id: null, body: null, cost_nano: 0, created_at: now });
    }
    for (let i = 0; i < missing.length; i += 1000) {
      // A record already there (a line that ran, or an earlier attempt) stays as it is.
      await store.Line.collection.insertMany(missing.slice(i, i + 1000) as never[], { ordered: false }).catch((err: unknown) => {
        if (!isDuplicateKey(err)) throw err;
      });
    }
  }
  await store.File.updateOne({ _id: fileId }, { $set: { content: null } });
}

/**
 * One page of an account's records ordered by (created_at, _id), newest or oldest first. The cursor is
 * the last id of the previous page; records created in the same millisecond are told apart by their id,
 * so paging never skips or repeats one. null: the cursor is not one of the account's records.
 */
async function pageOf<T>(model: Model<any>, accountId: string, filter: Record<string, unknown>, limit: number, after: string | undefined, order: 'asc' | 'desc', projection?: Record<string, 0>): Promise<{ items: T[]; hasMore: boolean } | null> {
  const q: Record<string, unknown> = { ...filter };
  const op = order === 'desc' ? '$lt' : '$gt';
  if (after) {
    const cursor = await model.findById(after, { account_id: 1, created_at: 1 }).lean<{ account_id: string; created_at: Date }>();
    if (!cursor || cursor.account_id !== accountId) return null;
    q.$or = [{ created_at: { [op]: cursor.created_at } }, { created_at: cursor.created_at, _id: { [op]: after } }];
  }
  const dir = order === 'desc' ? -1 : 1;
  const items = await model.find(q, projection).sort({ created_at: dir, _id: dir }).limit(limit + 1).lean<T[]>();
  return { items: items.slice(0, limit), hasMore: items.length > limit };
}

/** The lines of a batch's output file (its 2xx lines) or error file (the others, and those never run). */
function resultRows(role: 'output' | 'error', out: Outcome[]): Outcome[] {
  return role === 'output' ? out.filter((o) => o.line && ok(o.line.status_code)) : out.filter((o) => !o.line || !ok(o.line.status_code));
}

/** A batch's output or error file, as JSONL. */
export function resultFileText(batch: BatchDoc, role: 'output' | 'error', out: Outcome[]): string {
  const rows = resultRows(role, out);
  return rows.map((o) => JSON.stringify(openAiResult(batch, o))).join('\n') + (rows.length ? '\n' : '');
}

/** The bytes of `resultFileText`, counted line by line (the file is never held whole). */
export function resultFileBytes(batch: BatchDoc, role: 'output' | 'error', out: Outcome[]): number {
  let n = 0;
  for (const o of resultRows(role, out)) n += Buffer.byteLength(JSON.stringify(openAiResult(batch, o))) + 1;
  return n;
}

const ok = (status: number) => status >= 200 && status < 300;

/** The input lines of a stored file, already checked at upload. */
/**
 * The custom_id of every line of an input file, in order (blank lines skipped). An input is up to 20 MB
 * (about 60 ms of JSON.parse at once), read on the gateway's loop (a file's content, a deletion): the loop
 * is given back every LINES_A_TURN lines, so no other request waits behind the whole file.
 */
async function customIdsOf(content: string): Promise<Array<{ custom_id: string }>> {
  const out: Array<{ custom_id: string }> = [];
  const lines = content.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim()) out.push({ custom_id: (JSON.parse(lines[i]) as { custom_id: string }).custom_id });
    if (i % LINES_A_TURN === LINES_A_TURN - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}
const LINES_A_TURN = 500;

const notRun = (batch: BatchDoc) => (batch.status === 'expired' ? 'expired' : 'cancelled');

/** One line of an OpenAI output or error file (https://platform.openai.com/docs/api-reference/batch/request-output). */
export function openAiResult(batch: BatchDoc, o: Outcome): Record<string, unknown> {
  const id = `batch_req_${batch._id.replace(/^batch_/, '')}_${o.index}`;
  if (!o.line) {
    const why = notRun(batch);
    return { id, custom_id: o.custom_id, response: null, error: { code: `batch_${why}`, message: `the batch was ${why} before this request ran` } };
  }
  return { id, custom_id: o.custom_id, response: { status_code: o.line.status_code, request_id: o.line.request_id, body: o.line.body }, error: null };
}

/** One line of Message Batches results (https://docs.anthropic.com/en/api/retrieving-message-batch-results). */
export function anthropicResult(batch: BatchDoc, o: Outcome): Record<string, unknown> {
  if (!o.line) return { custom_id: o.custom_id, result: { type: batch.status === 'expired' ? 'expired' : 'canceled' } };
  if (ok(o.line.status_code)) return { custom_id: o.custom_id, result: { type: 'succeeded', message: o.line.body } };
  return { custom_id: o.custom_id, result: { type: 'errored', error: o.line.body } };
}

// ---- views

const unix = (d: Date | null | undefined) => (d ? Math.floor(new Date(d).getTime() / 1000) : null);
const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

export function fileView(doc: BatchFileDoc): Record<string, unknown> {
  return {
    id: doc._id, object: 'file', bytes: doc.bytes, created_at: unix(doc.created_at), expires_at: unix(doc.expires_at),
    filename: doc.filename, purpose: doc.purpose, status: 'processed', status_details: null,
  };
}

/** The OpenAI Batch object (https://platform.openai.com/docs/api-reference/batch/object). */
export function openAiBatchView(doc: BatchDoc): Record<string, unknown> {
  return {
    id: doc._id, object: 'batch', endpoint: doc.endpoint, errors: null, input_file_id: doc.input_file_id, completion_window: doc.completion_window,
    status: doc.status, output_file_id: doc.output_file_id, error_file_id: doc.error_file_id,
    created_at: unix(doc.created_at), in_progress_at: unix(doc.in_progress_at), expires_at: unix(doc.expires_at), finalizing_at: unix(doc.finalizing_at),
    completed_at: doc.status === 'completed' ? unix(doc.completed_at) : null, failed_at: doc.status === 'failed' ? unix(doc.completed_at) : null,
    expired_at: unix(doc.expired_at), cancelling_at: unix(doc.cancelling_at), cancelled_at: unix(doc.cancelled_at),
    request_counts: { total: doc.total, completed: doc.completed, failed: doc.failed },
    metadata: doc.metadata,
    // Beyond OpenAI's object (SDKs ignore it): what the batch was charged so far, in credits.
    cost: formatNano(doc.cost_nano),
  };
}

/** The Message Batch object (https://docs.anthropic.com/en/api/creating-message-batches). */
export function anthropicBatchView(doc: BatchDoc): Record<string, unknown> {
  const ended = FINAL.has(doc.status);
  const notRun = Math.max(0, doc.total - doc.completed - doc.failed);
  return {
    id: doc._id, type: 'message_batch',
    processing_status: ended ? 'ended' : doc.status === 'cancelling' ? 'canceling' : 'in_progress',
    request_counts: {
      processing: ended ? 0 : notRun, succeeded: doc.completed, errored: doc.failed,
      canceled: ended && doc.status === 'cancelled' ? notRun : 0, expired: ended && doc.status === 'expired' ? notRun : 0,
    },
    ended_at: ended ? iso(doc.completed_at ?? doc.cancelled_at ?? doc.expired_at) : null,
    created_at: iso(doc.created_at), expires_at: iso(doc.expires_at), archived_at: null, cancel_initiated_at: iso(doc.cancelling_at),
    results_url: ended ? `${doc.results_base}/v1/messages/batches/${doc._id}/results` : null,
    cost: formatNano(doc.cost_nano),
  };
}

const formatNano = (n: number) => formatCredits(n ?? 0);
