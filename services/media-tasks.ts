import type { Client } from '@temporalio/client';
import type { Model } from '../domain/catalogue';
import { errors, GatewayError } from '../domain/errors';
import { newId } from '../domain/ids';
import { reservationNano, type MediaQuote } from '../domain/media/pricing';
import { MAX_RUN_MS, POLL_INTERVAL_MS } from '../domain/media/cadence';
import type { TaskKind } from '../domain/media/task';
import { ACCOUNT_ID, MODEL, TASK_ID } from '../domain/media/search-attributes';
import type { AuthState } from '../gateway/context';
import type { Config } from '../infra/config';
import type { Db, TaskDoc } from '../infra/mongo';
import type { Logger } from '../infra/logger';
import type { Wallet } from './wallet';
import type { UsageRecorder } from './usage';
import type { MediaTaskInput, MediaTaskResult } from '../workflows/media-task';

export interface SubmitTask {
  auth: AuthState;
  requestId: string;
  kind: TaskKind;
  /** The public collection (`generations`, `edits`, `videos`, `music`, `speech`, `avatars`, ...). */
  endpoint: string;
  model: Model;
  /** The validated request, as the provider adapter will read it. */
  input: Record<string, unknown>;
  quote: MediaQuote;
}

/**
 * Accepting an async task: reserve the worst case (402 when it does not
 * fit, atomic under concurrency), write the task document, start its
 * workflow (workflowId = task id). Only then does the client get the id, so
 * a gateway restart never loses an accepted task.
 */
export class MediaTasks {
  constructor(
    private readonly deps: { db: Db; wallet: Wallet; usage: UsageRecorder; temporal: Client; config: Config; log: Logger },
  ) {}

  async submit(req: SubmitTask): Promise<TaskDoc> {
    const { auth } = req;
    const taskId = newId('task');
    const reserved = reservationNano(req.quote);
    const hold = await this.deps.wallet.apply(
      { opId: `${taskId}:reserve`, accountId: auth.account.id, keyId: auth.key.id, kind: 'reserve', amountNano: -reserved, keySpendNano: reserved, ref: taskId },
      { capNano: auth.key.spend_cap_nano },
    );
    if (hold.status === 'refused') throw errors.quota();
    const now = new Date();
    const doc: TaskDoc = {
      _id: taskId, account_id: auth.account.id, key_id: auth.key.id, key_name: auth.key.name, key_prefix: auth.key.prefix,
      kind: req.kind, endpoint: req.endpoint, model: req.model.id, state: 'queued', progress: null, input: req.input,
      quote: req.quote, reserved_nano: reserved, cost_nano: 0, unit_count: 0, upstream: null, result: null,
      final_body: null, final_status: null, error_code: null, error_message: null, request_id: req.requestId,
      created_at: now, started_at: null, completed_at: null, updated_at: now,
    };
    try {
      await this.deps.db.Task.create(doc);
      // Written now, not batched: the settlement replaces this row and must find it first.
      await this.deps.usage.replace({
        _id: taskId, request_id: req.requestId, task_id: taskId, account_id: auth.account.id, key_id: auth.key.id,
        key_name: auth.key.name, key_prefix: auth.key.prefix, endpoint: req.endpoint, model: req.model.id, status: 'in_flight',
        unit_type: req.quote.unitType, reserved_nano: reserved, submitted_at: now, created_at: now,
      });
      const input: MediaTaskInput = {
        taskId,
        pollIntervalMs: this.deps.config.MEDIA_POLL_INTERVAL_MS ?? POLL_INTERVAL_MS[req.kind],
        maxRunMs: MAX_RUN_MS[req.kind] === null ? null : (this.deps.config.MEDIA_MAX_RUN_MS ?? MAX_RUN_MS[req.kind]),
      };
      await this.deps.temporal.workflow.start('mediaTaskWorkflow', {
        taskQueue: this.deps.config.TEMPORAL_TASK_QUEUE,
        workflowId: taskId,
        args: [input],
        typedSearchAttributes: [
          { key: TASK_ID, value: taskId },
          { key: ACCOUNT_ID, value: auth.account.id },
          { key: MODEL, value: req.model.id },
        ],
      });
    } catch (err) {
      await this.abandon(doc, err);
      throw new GatewayError('internal_error', 'the task could not be started; nothing was charged', { status: 503, cause: err });
    }
    return doc;
  }

  /** The workflow could not start: give the hold back and close the task as failed. */
  private async abandon(doc: TaskDoc, err: unknown): Promise<void> {
    this.deps.log.error('task not started', { task: doc._id, err });
    await this.deps.wallet.apply({
      opId: `${doc._id}:settle`, accountId: doc.account_id, keyId: doc.key_id, kind: 'settle',
      amountNano: doc.reserved_nano, keySpendNano: -doc.reserved_nano, ref: doc._id,
    });
    await this.deps.db.Task.updateOne({ _id: doc._id }, { $set: { state: 'failed', error_code: 'not_started', completed_at: new Date() } }).catch(() => undefined);
    await this.deps.usage.replace({
      _id: doc._id, request_id: doc.request_id, task_id: doc._id, account_id: doc.account_id, key_id: doc.key_id,
      key_name: doc.key_name, key_prefix: doc.key_prefix, endpoint: doc.endpoint, model: doc.model, status: 'error',
      error_code: 'not_started', error_message: 'the task could not be started', submitted_at: doc.created_at, created_at: doc.created_at,
    }).catch(() => undefined);
  }

  /** A task of this account in this collection, or 404 (other accounts' tasks do not exist for you). */
  async get(accountId: string, id: string, endpoints: string[]): Promise<TaskDoc> {
    const doc = await this.deps.db.Task.findById(id).lean<TaskDoc>();
    if (!doc || doc.account_id !== accountId || !endpoints.includes(doc.endpoint)) throw errors.notFound(`no task ${id}`);
    return doc;
  }

  /** Wait for the task's workflow to settle it, then read the final document. */
  async waitSettled(taskId: string): Promise<TaskDoc> {
    await this.deps.temporal.workflow.getHandle<(i: MediaTaskInput) => Promise<MediaTaskResult>>(taskId).result();
    return (await this.deps.db.Task.findById(taskId).lean<TaskDoc>())!;
  }
}
