import { ApplicationFailure } from '@temporalio/common';
import { FINAL_STATES, type ProviderOutcome, type SyncAnswer, type TaskDocument } from '../../domain/media/task';
import { settlementNano } from '../../domain/media/pricing';
import type { RedisClient } from '../../platform/redis';
import type { Logger } from '../../platform/logger';
import { failpoint } from '../../platform/failpoints';
import { countTaskFinished } from '../../platform/metrics/index';
import type { LedgerOp, Wallet } from '../accounts/wallet';
import type { UsageRecorder } from '../usage/usage';
import { usageRowFromTask } from '../usage/task-usage';
import { type MediaModels, mediaRedisKeys } from './store';
import { decideSettlement } from './settlement-decision';

/**
 * A media task's settlement: the refund of its hold's surplus, its final
 * usage row and its final fields, applied once whoever runs it (the media
 * workflow's activities, activities/media.ts, and the gateway's release of a
 * task it did not start, capabilities/media/media-tasks.ts), on the task's
 * first settlement's outcome (./settlement-decision.ts). Also the task
 * document's reads and writes the activities share with it.
 */
export interface SettlementDeps {
  db: Pick<MediaModels, 'Task'>;
  redis: RedisClient;
  wallet: Wallet;
  usage: UsageRecorder;
  log: Logger;
}

/**
 * What the settlement needs of the task document, read once by the
 * submission and carried through the workflow (recorded in its history), so
 * the settlement reads nothing: the task's identity, owner, quote and hold.
 */
export type TaskFacts = Omit<TaskDocument, 'input' | 'result' | 'final_body' | 'created_at' | 'started_at' | 'completed_at' | 'updated_at'> & {
  /** Unix ms (payloads carry JSON: no Date). */
  created_at: number;
};

export interface SettleResult {
  costNano: number;
  /** The outcome settled: the task's first settlement's (absent from results recorded before 2026-11-29). */
  state?: ProviderOutcome['state'];
}

export interface SettleInput {
  taskId: string;
  outcome: ProviderOutcome;
  /** From the submission; absent (histories of older workers, direct calls): the task document is read. */
  task?: TaskFacts;
  sync?: SyncAnswer;
  /** The last progress a poll reported (null: none). */
  progress?: number | null;
}

/**
 * When the settle op `{task}:settle` is known to have had no ledger row, on
 * this process's `performance.now()` clock (`Wallet.applyMarkedAhead`'s
 * `absentAt`): the task's creation. The op id carries the task id, minted by
 * the submission that wrote the task, so nothing (this activity, a replay of
 * it on another worker, the gateway's refund of a task whose workflow did not
 * start) could apply it before; whatever applied it since left its marker,
 * which lives until the op's row exists and 10 minutes more. So while the
 * task is younger than FRESH_OP_MS (5 minutes: a sync image settles within
 * seconds) the marker answers alone and the ledger read is skipped; an older
 * task (a long video, a retry after workers were down) reads the ledger as
 * before. The age is taken on the wall clock (the gateway stamped
 * `created_at`); FRESH_OP_MS leaves half the marker's life for clock skew
 * between the processes and a stall before the script.
 */
export function settleAbsentAt(createdAt: Date, nowMs = Date.now()): number {
  return performance.now() - Math.max(0, nowMs - createdAt.getTime());
}

/** What the settlement needs of a task (tests build a settlement input from a task document with it). */
export function factsOf(task: TaskDocument): TaskFacts {
  const { input: _i, result: _r, final_body: _f, created_at, started_at: _s, completed_at: _c, updated_at: _u, ...rest } = task;
  return { ...rest, created_at: created_at.getTime() };
}

/** The task document as the settlement sees it when it was given the facts (nothing read). */
function taskOfFacts(f: TaskFacts, progress: number | null): TaskDocument {
  return {
    ...f, progress, input: {}, result: null, final_body: null, created_at: new Date(f.created_at),
    started_at: null, completed_at: null, updated_at: new Date(),
  };
}

/** The task document, or a non-retryable failure (a task is never deleted once its workflow runs). */
export async function loadTask(deps: SettlementDeps, taskId: string): Promise<TaskDocument> {
  const task = await deps.db.Task.findById(taskId).lean<TaskDocument>();
  if (!task) throw ApplicationFailure.nonRetryable(`task ${taskId} not found`, 'TaskNotFound');
  return task;
}

/** Sets fields of the task document (and its `updated_at`). */
export function patchTask(deps: SettlementDeps, taskId: string, set: Partial<TaskDocument>) {
  return deps.db.Task.updateOne({ _id: taskId }, { $set: { ...set, updated_at: new Date() } });
}

/** The task document's final fields for its outcome. */
function finalFields(task: TaskDocument, input: Pick<SettleInput, 'outcome' | 'sync'>, cost: number, units: number, completedAt: Date, expiresAt: Date | null, upstream: TaskDocument['upstream']): Partial<TaskDocument> {
  const o = input.outcome;
  return {
    ...(input.sync ? { upstream, attempts_log: input.sync.attemptsLog, started_at: new Date(input.sync.answeredAt) } : {}),
    state: o.state, cost_nano: cost, unit_count: units, completed_at: completedAt,
    progress: o.state === 'succeeded' && task.progress !== null ? 100 : task.progress,
    result: o.state === 'succeeded'
      ? { urls: o.urls, expires_at: expiresAt, links_expired: false, extra: o.extra ?? null }
      : null,
    final_body: o.clientBody ?? null, final_status: o.clientStatus ?? null,
    error_code: o.errorCode ?? null, error_message: o.errorMessage ?? null,
  };
}

/**
 * The settle op of a task that cost `costNano`: what its hold gives back (all of it when it cost
 * nothing), under the op id every settlement and release of the task shares, so it applies once.
 */
export function settleOp(task: Pick<TaskDocument, '_id' | 'account_id' | 'key_id' | 'reserved_nano'>, costNano: number): LedgerOp {
  const refund = task.reserved_nano - costNano;
  return { opId: `${task._id}:settle`, accountId: task.account_id, keyId: task.key_id, kind: 'settle', amountNano: refund, keySpendNano: -refund, ref: task._id };
}

/**
 * Settle on the actual output and refund the surplus (all of it on failure,
 * expiry or cancellation); then the task and its usage row turn final.
 * The wallet op `{taskId}:settle` is applied once however often and on
 * whichever worker this runs (a retry, a replay after a worker died):
 * `applyMarkedAhead` reads the ledger for its row, then the script
 * checks the op's marker, moves the projection and writes the op ahead
 * to the journal (drained to the ledger in batches). The ledger read is
 * skipped while the task is young (settleAbsentAt). Given the
 * submission's facts, the task is not read: two Redis scripts (the
 * decision, the wallet op), two writes. The outcome applied is the task's
 * first settlement's (capabilities/media/settlement-decision.ts).
 */
export async function settleTask(deps: SettlementDeps, proposed: SettleInput): Promise<Required<SettleResult>> {
  // The first settlement's outcome decides, whatever this one was asked to settle (capabilities/media/settlement-decision.ts).
  const decided = await decideSettlement(deps.redis, proposed.taskId, { outcome: proposed.outcome, ...(proposed.sync ? { sync: proposed.sync } : {}), progress: proposed.progress ?? null });
  if (decided.outcome.state !== proposed.outcome.state) {
    deps.log.warn('an earlier settlement of this task decided another outcome: applying it', { task: proposed.taskId, proposed: proposed.outcome.state, decided: decided.outcome.state });
  }
  const input: SettleInput = { ...proposed, outcome: decided.outcome, sync: decided.sync, progress: decided.progress };
  const task = input.task ? taskOfFacts(input.task, input.progress ?? null) : await loadTask(deps, input.taskId);
  const o = input.outcome;
  const cost = o.state === 'succeeded' ? settlementNano(task.quote, o.units) : 0;
  await deps.wallet.applyMarkedAhead(settleOp(task, cost), { absentAt: settleAbsentAt(task.created_at) });
  failpoint('media.settle.after-wallet');
  await finishTask(deps, task, input, cost);
  failpoint('media.settle.before-report');
  return { costNano: cost, state: o.state };
}

/**
 * What follows a settlement's wallet op (settleTask's, or the release of a task not started,
 * capabilities/media/media-tasks.ts): the task's usage row, then its final fields, on the decided
 * outcome and cost. Idempotent: written again, both say the same.
 */
export async function finishTask(deps: SettlementDeps, task: TaskDocument, input: Pick<SettleInput, 'outcome' | 'sync'>, cost: number): Promise<void> {
  const o = input.outcome;
  const now = new Date();
  const completedAt = FINAL_STATES.has(task.state) && task.completed_at ? task.completed_at : now;
  const upstream = input.sync ? { channel: input.sync.channel, task_id: null, attempts: input.sync.attempts } : task.upstream;
  // The usage row turns final before the task does: a client that sees the task settled finds its row settled.
  const units = o.state === 'succeeded' ? o.units : 0;
  const expiresAt = o.expiresAt ? new Date(o.expiresAt) : null;
  await deps.usage.replace(usageRowFromTask({ ...task, upstream }, {
    status: o.state === 'succeeded' ? 'success' : 'error', costNano: cost, units, errorCode: o.errorCode ?? null,
    errorMessage: o.errorMessage ?? null, completedAt, urls: o.urls, expiresAt,
  }));
  await patchTask(deps, task._id, finalFields(task, input, cost, units, completedAt, expiresAt, upstream));
  if (!FINAL_STATES.has(task.state)) countTaskFinished(task.kind, o.state, task.created_at, completedAt);
  // Polls read the final document from now on (capabilities/media/media-tasks.ts, the pending marker).
  if (task.kind === 'image') await deps.redis.del(mediaRedisKeys.taskPending(task._id));
}
