import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Model } from '../../domain/catalogue';
import { errors, GatewayError } from '../../domain/errors';
import { newTimeFirstId } from '../../platform/ids';
import { reservationNano, type MediaQuote } from '../../domain/media/pricing';
import { MAX_RUN_MS, POLL_INTERVAL_MS } from '../../domain/media/cadence';
import { publicStatus, type ProviderOutcome, type TaskKind, type TaskDocument } from '../../domain/media/task';
import { ACCOUNT_ID, MODEL, TASK_ID } from '../../domain/media/search-attributes';
import type { AuthState } from '../../domain/api-key';
import type { Config } from '../../platform/config';
import { isDuplicateKey } from '../../platform/mongo';
import { type MediaModels, mediaRedisKeys } from './store';
import { decideSettlement } from './settlement-decision';
import { finishTask, settleOp, settleTask } from './settlement';
import { type RedisClient } from '../../platform/redis';
import type { Logger } from '../../platform/logger';
import type { ApplyResult, Wallet } from '../accounts/wallet';
import { usageDoc, type UsageRecorder } from '../usage/usage';
import { usageRowFromTask } from '../usage/task-usage';
import type { mediaTaskWorkflow, MediaTaskInput } from '../../workflows/media-task';
import { MEDIA_TASK_WORKFLOW } from '../../domain/workflow-ids';
import { taskQueueFor } from '../../domain/task-queues';
import pRetry from 'p-retry';

/** Starting a task's workflow: 3 tries over about 0.6 s (the workflow start is idempotent). */
export const START_RETRY = { retries: 2, minTimeout: 200, factor: 2, randomize: true } as const;
/** A hold whose answer never came is asked again (same op id) for about 6 s, as a chat charge is (gateway/chat/settle.ts). */
export const HOLD_RETRY = { retries: 6, minTimeout: 100, factor: 2, maxTimeout: 2_000 } as const;
/** Closing a task that was not accepted (what lets the orphan sweep finish its release): about 15 s of store outage. */
const CLOSE_RETRY = { retries: 8, minTimeout: 100, factor: 2, maxTimeout: 3_000 } as const;
const NOT_STARTED = 'the task could not be accepted; nothing was charged';
/** The settlement of a task the gateway did not accept (what `release` does, as a settlement decision). */
const NOT_STARTED_OUTCOME: ProviderOutcome = { state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: 'not_started', errorMessage: NOT_STARTED };

/**
 * The answer to a submission that could not be accepted (500
 * `internal_error` with Retry-After, in the endpoint's error shape; spec 1
 * section 7 has no other code for it): the task is closed as not started and any hold it
 * got is released. The task owns the call's usage row (error, cost 0), so
 * the route writes no second one.
 */
export class TaskNotAccepted extends GatewayError {
  constructor(readonly taskId: string, cause: unknown) {
    super('internal_error', 'the task could not be accepted (a store was briefly unavailable); nothing was charged, retry the request', {
      headers: { 'retry-after': '1' }, cause,
    });
  }
}

/**
 * An async image task in flight is polled every 2-3 s (spec 2 section 4.2):
 * while it is as submitted, a Redis marker answers the poll (202) instead of
 * the store. The marker is written before the workflow starts and deleted by
 * the settlement after the task document turned final, so a poll never
 * reports a settled task as pending for longer than that one step; absent
 * (expired, Redis lost), polls read the task document as before.
 */
export const PENDING_MARKER_TTL_S = 10 * 60;

/** What the marker holds: the owner and collection (a poll of another account's task reads the store: 404) and the 202 body. */
interface PendingMarker {
  a: string;
  e: string;
  v: { id: string; status: string; model: string; created_at: number };
  /** The task's hold (nano), for the poll's x-gateway-cost-held (absent on markers written before it). */
  h?: number;
}

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
  /** Checked at the edge (gateway/middleware/webhook-submission.ts): where the final-state webhook goes. */
  callbackUrl?: string | null;
}

/**
 * Accepting an async task: reserve the worst case (402 when it does not
 * fit, atomic under concurrency), write the task document, start its
 * workflow (workflowId = task id). Only then does the client get the id, so
 * a gateway restart never loses an accepted task. A step whose answer is
 * lost is asked again (each is idempotent); a task that still cannot be
 * accepted is closed as not started and its hold, if it got one, released
 * once (`abandon`): the client gets a 500 (Retry-After: 1) and nothing is charged.
 */
export class MediaTasks {
  constructor(
    private readonly deps: { db: MediaModels; redis: RedisClient; wallet: Wallet; usage: UsageRecorder; temporal: Client; config: Config; log: Logger },
  ) {}

  async submit(req: SubmitTask): Promise<TaskDocument> {
    const { auth } = req;
    const taskId = newTimeFirstId('task');
    // No ledger row of this task's ops can exist before its document does (written below, the id is new).
    const absentAt = performance.now();
    const now = new Date();
    const doc: TaskDocument = {
      _id: taskId, account_id: auth.account.id, key_id: auth.key.id, key_name: auth.key.name, key_prefix: auth.key.prefix,
      kind: req.kind, endpoint: req.endpoint, model: req.model.id, state: 'queued', progress: null, input: req.input,
      quote: req.quote, reserved_nano: reservationNano(req.quote), cost_nano: 0, unit_count: 0, upstream: null, result: null,
      final_body: null, final_status: null, error_code: null, error_message: null, request_id: req.requestId,
      created_at: now, started_at: null, completed_at: null, updated_at: now,
      ...(req.callbackUrl ? { callback_url: req.callbackUrl } : {}),
    };
    // 1. The task exists before any money moves, so a crash at any later step can be resumed (resumeOrphans).
    // An insert whose answer was lost is sent again: its fresh id makes "duplicate" mean "written".
    // The document is complete as built (every field the schema defaults is set), so it goes to the
    // driver as it is: mongoose's `create` hydrated, validated and saved a copy, about 0.25 ms of CPU.
    const create = () => this.deps.db.Task.collection.insertOne(doc as never).then(() => undefined, (err: unknown) => {
      if (!isDuplicateKey(err)) throw err;
    });
    await create().catch(() => pRetry(create, HOLD_RETRY)).catch((err: unknown) => {
      throw new GatewayError('internal_error', 'the task could not be stored (the store is briefly unavailable); nothing was charged, retry the request', {
        headers: { 'retry-after': '1' }, cause: err,
      });
    });
    // 2. Reserve the worst case: atomic, 402 when it does not fit. A hold whose answer never came (Redis
    // restarting, a reply lost after the script ran) is asked again with the same op id: the op applies
    // once, so the retry learns what happened (`duplicate`: it is on).
    const cap = auth.key.spend_cap_nano;
    let hold: ApplyResult;
    try {
      hold = await this.reserve(doc, cap, absentAt).catch(() => pRetry(() => this.reserve(doc, cap, absentAt), HOLD_RETRY));
    } catch (err) {
      // Still unknown: the task must neither run nor keep a hold it may have. Never deleted (its hold
      // and in-flight row may exist): closed as not started, and the hold released once.
      await this.abandon(doc, err, false);
      throw new TaskNotAccepted(doc._id, err);
    }
    if (hold.status === 'refused') {
      // A clean refusal: nothing moved, nothing was appended; the task never existed for the client.
      await pRetry(() => this.deps.db.Task.deleteOne({ _id: taskId }), CLOSE_RETRY).catch((err: unknown) => {
        this.deps.log.error('refused task not deleted', { task: taskId, err });
      });
      throw errors.quota();
    }
    // 3. The poll marker (images), then the workflow: the settlement deletes a marker that already exists.
    // A busy Temporal frontend fails a start now and then: starting is idempotent, so retry.
    try {
      if (doc.kind === 'image') await this.markPending(doc);
      await pRetry(() => this.start(doc), START_RETRY);
    } catch (err) {
      if (await this.abandon(doc, err, true)) return doc;
      throw new TaskNotAccepted(doc._id, err);
    }
    return doc;
  }

  /**
   * The hold, written ahead with the task's in-flight usage row: one Redis
   * script moves the projection (refusing what does not fit) and appends both
   * to the ledger journal, drained to Mongo in batches. Deduped from any
   * process like every non-chat op (`Wallet.applyMarkedAhead`: the ledger,
   * then the op's marker); `absentAt` says when this call knew the op had no
   * row (before it wrote the task whose fresh id the op carries), which
   * spares the ledger read. The in-flight row is inserted only if the task
   * has no row yet, so a settled row written before the drain gets there
   * stays as it is.
   */
  private reserve(doc: TaskDocument, capNano: number | null, absentAt?: number) {
    return this.deps.wallet.applyMarkedAhead(
      {
        opId: `${doc._id}:reserve`, accountId: doc.account_id, keyId: doc.key_id, kind: 'reserve',
        amountNano: -doc.reserved_nano, keySpendNano: doc.reserved_nano, ref: doc._id,
      },
      { gate: { capNano }, usage: usageDoc(usageRowFromTask(doc)), absentAt },
    );
  }

  /** The workflow (workflowId = task id: starting twice is refused). */
  private async start(doc: TaskDocument): Promise<void> {
    const kind = doc.kind;
    const input: MediaTaskInput = {
      taskId: doc._id,
      pollIntervalMs: this.deps.config.MEDIA_POLL_INTERVAL_MS ?? POLL_INTERVAL_MS[kind],
      maxRunMs: MAX_RUN_MS[kind] === null ? null : (this.deps.config.MEDIA_MAX_RUN_MS ?? MAX_RUN_MS[kind]),
      ...(doc.callback_url ? { callback: true } : {}),
    };
    try {
      await this.deps.temporal.workflow.start<typeof mediaTaskWorkflow>(MEDIA_TASK_WORKFLOW, {
        taskQueue: taskQueueFor(this.deps.config.TEMPORAL_TASK_QUEUE, 'mediaTaskWorkflow'),
        workflowId: doc._id,
        args: [input],
        typedSearchAttributes: [
          { key: TASK_ID, value: doc._id },
          { key: ACCOUNT_ID, value: doc.account_id },
          { key: MODEL, value: doc.model },
        ],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  /**
   * Tasks a crashed gateway left between writing the task and starting its
   * workflow: redo the idempotent steps (the reserve op applies once, the
   * workflow starts once). A task whose hold no longer fits fails with no
   * money moved. Run by the link sweeper workflow every minute.
   */
  async resumeOrphans(olderThanMs: number, now = Date.now()): Promise<number> {
    const stale = await this.deps.db.Task.find({ state: 'queued', upstream: null, created_at: { $lt: new Date(now - olderThanMs) } })
      .limit(100)
      .lean<TaskDocument[]>();
    let resumed = 0;
    for (const doc of stale) {
      try {
        await this.deps.temporal.workflow.getHandle(doc._id).describe();
        continue; // it has its workflow
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      const hold = await this.reserve(doc, null);
      if (hold.status === 'refused') {
        await this.deps.db.Task.updateOne({ _id: doc._id }, { $set: { state: 'failed', error_code: 'not_started', completed_at: new Date(now) } });
        continue;
      }
      this.deps.log.warn('resuming a task a gateway left unstarted', { task: doc._id });
      await this.start(doc);
      resumed++;
    }
    // Tasks a gateway closed as not accepted but could not release then (Redis or the store stayed down).
    const unreleased = await this.deps.db.Task.find({ release_pending: true }).limit(100).lean<TaskDocument[]>();
    for (const doc of unreleased) {
      try {
        await this.release(doc, doc.completed_at ?? new Date(now));
        resumed++;
      } catch (err) {
        this.deps.log.warn('hold of a task not accepted not released yet; next sweep', { task: doc._id, err });
      }
    }
    return resumed;
  }

  private async markPending(doc: TaskDocument): Promise<void> {
    const marker: PendingMarker = {
      a: doc.account_id, e: doc.endpoint,
      v: { id: doc._id, status: publicStatus(doc.kind, doc.state), model: doc.model, created_at: Math.floor(doc.created_at.getTime() / 1000) },
      h: doc.reserved_nano,
    };
    await this.deps.redis.set(mediaRedisKeys.taskPending(doc._id), JSON.stringify(marker), 'EX', PENDING_MARKER_TTL_S);
  }

  /** The 202 body of an image task of this account still as submitted, from its marker; null: read the task document. */
  async pendingView(accountId: string, id: string, endpoints: string[]): Promise<PendingMarker['v'] | null> {
    return (await this.pending(accountId, id, endpoints))?.view ?? null;
  }

  /** pendingView with the task's hold (nano; undefined on an older marker). */
  async pending(accountId: string, id: string, endpoints: string[]): Promise<{ view: PendingMarker['v']; heldNano?: number } | null> {
    const raw = await this.deps.redis.get(mediaRedisKeys.taskPending(id)).catch(() => null);
    if (!raw) return null;
    const m = JSON.parse(raw) as PendingMarker;
    return m.a === accountId && endpoints.includes(m.e) ? { view: m.v, heldNano: m.h } : null;
  }

  /**
   * A task the client is told was not accepted (its hold's answer never
   * came, or its workflow could not be started): it must not run, and must
   * not keep a hold it may have.
   * 1. A workflow whose start's answer was lost is terminated.
   * 2. The task turns final (`failed`, `not_started`) with `release_pending`:
   *    the orphan sweep never starts it, and finishes its release if this
   *    process cannot (Redis or the store still down, this gateway killed).
   * 3. `release`: exactly what a settlement refunding everything does, by
   *    the same op ids, so it never applies twice wherever it is retried.
   * True when the task stands after all: its workflow ran and settled it
   * (`settledByItsWorkflow`, `release`); the client then gets its task.
   */
  private async abandon(doc: TaskDocument, err: unknown, mayHaveStarted: boolean): Promise<boolean> {
    if (mayHaveStarted && (await this.settledByItsWorkflow(doc, err))) return true;
    this.deps.log.error('task not accepted; closing it and releasing its hold', { task: doc._id, err });
    if (mayHaveStarted) {
      await this.deps.temporal.workflow.getHandle(doc._id).terminate('the task could not be accepted').catch((e: unknown) => {
        if (!(e instanceof WorkflowNotFoundError)) this.deps.log.warn('workflow of a task not accepted not terminated', { task: doc._id, err: e });
      });
    }
    const completedAt = new Date();
    const o = NOT_STARTED_OUTCOME;
    const closed = { state: o.state, error_code: o.errorCode, error_message: o.errorMessage, completed_at: completedAt, updated_at: completedAt, release_pending: true };
    await pRetry(() => this.deps.db.Task.updateOne({ _id: doc._id }, { $set: closed }), CLOSE_RETRY).catch((e: unknown) => {
      this.deps.log.error('task not accepted but not closed', { task: doc._id, err: e });
    });
    await this.deps.redis.del(mediaRedisKeys.taskPending(doc._id)).catch(() => undefined);
    // The answer waits for the release about as long as the hold was asked (the sweep finishes it otherwise).
    return pRetry(() => this.release(doc, completedAt), HOLD_RETRY).catch((e: unknown) => {
      this.deps.log.error('hold of a task not accepted not released yet; the orphan sweep will', { task: doc._id, err: e });
      return false;
    });
  }

  /**
   * A workflow whose start's answer was lost may have run, and settled the
   * task (a synchronous vendor answers in milliseconds), before the gateway
   * gives up on it. So "not started" is first proposed as the task's
   * settlement (capabilities/media/settlement-decision.ts): lost to an
   * earlier settlement, the task stands as that settled it, its workflow is
   * left to finish and the client gets its task; won, a settlement that comes
   * later applies "not started" too, so the refund and the task agree. Redis
   * unreachable: the task is closed as before, and `release` proposes when it
   * runs (and puts back a settlement that came first).
   */
  private async settledByItsWorkflow(doc: TaskDocument, err: unknown): Promise<boolean> {
    const decided = await decideSettlement(this.deps.redis, doc._id, { outcome: NOT_STARTED_OUTCOME, progress: null }).catch(() => undefined);
    if (!decided || decided.outcome.errorCode === NOT_STARTED_OUTCOME.errorCode) return false;
    this.deps.log.warn('the start of a task seemed to fail but its workflow ran and settled it: the task stands', { task: doc._id, state: decided.outcome.state, err });
    return true;
  }

  /**
   * Give back the hold of a task closed as not started, once: the hold op is
   * applied first (a no-op if it was on; refused when it no longer fits, and
   * then nothing is held), then the settle op refunds all of it. The task's
   * one usage row turns final (error, cost 0), and the flag is cleared.
   * True when the task's workflow had settled it after all (the task stands).
   */
  private async release(doc: TaskDocument, completedAt: Date): Promise<boolean> {
    const decided = await decideSettlement(this.deps.redis, doc._id, { outcome: NOT_STARTED_OUTCOME, progress: null });
    if (decided.outcome.errorCode !== NOT_STARTED_OUTCOME.errorCode) {
      // Its workflow settled it (Redis was out for abandon's proposal): that settlement is applied again, idempotently,
      // which puts back the fields the close overwrote. The task stands.
      this.deps.log.warn('a task closed as not started was settled by its workflow: its settlement stands', { task: doc._id, state: decided.outcome.state });
      await settleTask(this.deps, { taskId: doc._id, outcome: decided.outcome, sync: decided.sync, progress: decided.progress });
      await this.deps.db.Task.updateOne({ _id: doc._id }, { $set: { release_pending: false } });
      return true;
    }
    const hold = await this.reserve(doc, null);
    if (hold.status !== 'refused') await this.deps.wallet.apply(settleOp(doc, 0));
    // The task as abandon closed it: its usage row and fields turn final on "not started", as a settlement's would.
    await finishTask(this.deps, { ...doc, state: 'failed', completed_at: completedAt }, { outcome: NOT_STARTED_OUTCOME }, 0);
    await this.deps.db.Task.updateOne({ _id: doc._id }, { $set: { release_pending: false } });
    return false;
  }

  /** A task of this account in this collection, or 404 (other accounts' tasks do not exist for you). */
  async get(accountId: string, id: string, endpoints: string[]): Promise<TaskDocument> {
    const doc = await this.deps.db.Task.findById(id).lean<TaskDocument>();
    if (!doc || doc.account_id !== accountId || !endpoints.includes(doc.endpoint)) throw errors.notFound(`no task ${id}`);
    return doc;
  }

  /** Wait for the task's workflow to settle it, then read the final document. */
  async waitSettled(taskId: string): Promise<TaskDocument> {
    await this.deps.temporal.workflow.getHandle<typeof mediaTaskWorkflow>(taskId).result();
    return (await this.deps.db.Task.findById(taskId).lean<TaskDocument>())!;
  }
}
