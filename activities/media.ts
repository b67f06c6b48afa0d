import { Context, ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import { mediaRedisKeys } from '../capabilities/media/store';
import type { Catalogue } from '../domain/catalogue';
import { type ProviderOutcome, type TaskOutcome, type TaskState, type TaskDocument, type SyncAnswer } from '../domain/media/task';
import { MAX_RUN_MS } from '../domain/media/cadence';
import type { Db } from '../capabilities/store';
import { failpoint } from '../platform/failpoints';
import { type RedisClient } from '../platform/redis';
import type { Client } from '@temporalio/client';
import { upstreamApiKey, type Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import { MediaTasks } from '../capabilities/media/media-tasks';
import type { Wallet } from '../capabilities/accounts/wallet';
import type { UsageRecorder } from '../capabilities/usage/usage';
import { mediaProviders, type MediaHttp, type ProviderCall } from '../providers/media';
import { climbLadder, MEDIA_LADDER, UpstreamHttpError, UpstreamTransportError } from '../domain/channel-ladder';
import { claimSubmission, recordAnswer, releaseClaim, renewClaim, CLAIM_RENEW_MS } from '../capabilities/media/submission-claim';
import { factsOf, loadTask, patchTask, settleTask, type SettleInput, type SettleResult, type TaskFacts } from '../capabilities/media/settlement';
import { inSpan } from '../platform/tracing/span';
import { mediaErrorJson } from '../domain/error-bodies';
import { loggedAttempt, type CallAttempt } from '../domain/call-attempts';
import type { ChannelHealth } from '../capabilities/catalogue/channel-health';

export interface MediaActivityDeps {
  db: Db;
  redis: RedisClient;
  wallet: Wallet;
  usage: UsageRecorder;
  catalogue: () => Catalogue;
  mediaHttp: MediaHttp;
  temporal: Client;
  config: Config;
  log: Logger;
  /** The process's channel breakers (capabilities/catalogue/channel-health.ts); absent, the ladder ignores health. */
  channelHealth?: ChannelHealth;
}

/** Uploads and large answers outlive the idempotency retention (7 days), then go. */
export const TASK_FILE_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * A task still queued with no workflow this long after submission was left by a crashed gateway (the
 * sweep runs every minute, so it starts 30-90 s after the crash; it was 2-3 minutes). A gateway that is
 * only slow (its hold or its workflow start retried through a store, Redis or Temporal outage) may still
 * be in its accept path when the sweep starts the task: harmless, as every step is idempotent by id (the
 * hold op, the start: `WorkflowExecutionAlreadyStarted` is a success), and a gateway that gives up after
 * all proposes "not started" as the task's settlement (capabilities/media/settlement-decision.ts), so the
 * task, the refund and the client's answer agree whichever comes first (test/media/submit-faults.test.ts).
 */
export const ORPHAN_AFTER_MS = 30 * 1000;

export type { SyncAnswer, SettleInput, SettleResult, TaskFacts };

export type SubmitOutcome =
  | { kind: 'done'; outcome: ProviderOutcome; task?: TaskFacts; sync?: SyncAnswer }
  | { kind: 'task'; channelId: string; upstreamTaskId: string; task?: TaskFacts };

/** A synchronous answer (or the ladder's failure) settled by the submission itself. */
export interface SettledOutcome {
  kind: 'settled';
  state: ProviderOutcome['state'];
  costNano: number;
}

export interface PollOutcome {
  state: TaskState;
  progress: number | null;
  outcome?: ProviderOutcome;
}

function failed(code: string, message: string, clientStatus = 502, upstreamBody?: string): ProviderOutcome {
  return {
    state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: code, errorMessage: message, clientStatus,
    clientBody: upstreamBody ?? mediaErrorJson(code, message, 'upstream_error'),
  };
}

/**
 * How a submission that climbed the whole ladder failed: a 4xx the upstream
 * refused (passed through, not charged), the last 5xx, or no answer.
 * Anything that is not an upstream failure is thrown (the activity retries).
 */
function outcomeOfFailure(err: unknown): ProviderOutcome {
  if (err instanceof UpstreamHttpError) {
    return err.status < MEDIA_LADDER.retryStatusFrom
      ? failed(`upstream_${err.status}`, err.message, err.status, err.body)
      : failed('upstream_error', err.message, err.status, err.body);
  }
  if (err instanceof UpstreamTransportError) {
    return err.kind === 'timeout' ? failed('upstream_timeout', err.message, 504) : failed('upstream_unreachable', err.message, 502);
  }
  throw err;
}

type LadderEntry = { call: ProviderCall; provider: (typeof mediaProviders)[string] };

/** The task's channels with their providers: the model's ladder, or the one channel that accepted the task (a poll). */
function callFor(deps: MediaActivityDeps, task: TaskDocument, channelId?: string): LadderEntry[] {
  const model = deps.catalogue().resolve(task.model);
  if (!model) throw ApplicationFailure.nonRetryable(`model ${task.model} left the catalogue`, 'ModelGone');
  // A poll goes to the channel that accepted the task, even if it left the ladder since.
  const found = channelId ? deps.catalogue().channel(model, 'task', channelId) : undefined;
  const channels = channelId ? (found ? [found] : []) : deps.catalogue().channels(model, 'task');
  return channels.map((channel) => {
    const provider = mediaProviders[channel.upstream];
    if (!provider) throw ApplicationFailure.nonRetryable(`no media provider ${channel.upstream}`, 'NoProvider');
    return {
      provider,
      call: {
        // A submission is a ladder attempt (its time to first byte is counted under the channel); a poll is not.
        channel, task, http: channelId ? deps.mediaHttp : deps.mediaHttp.forAttempt(channel.id), taskFiles: deps.db.TaskFile, upstreamModel: channel.upstream_model ?? model.id,
        apiKey: upstreamApiKey(deps.config, channel),
      },
    };
  });
}

/**
 * Runs `fn` while reporting liveness every 2 s (local activities cannot
 * heartbeat; regular ones do during long vendor calls) and, given a claim,
 * renewing the submission's lease.
 */
async function heartbeating<T>(fn: () => Promise<T>, renew?: () => Promise<void>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => {
    if (!ctx.info.isLocal) ctx.heartbeat();
    renew?.().catch(() => undefined); // a missed renewal is retried in 2 s; the lease lasts 10
  }, CLAIM_RENEW_MS);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}

/** The whole ladder's deadline where the family has one (images: 280 s, each hop up to 240 s). */
function ladderDeadline(deps: MediaActivityDeps, task: TaskDocument): { deadline?: number; deadlineMessage?: string } {
  const base = MAX_RUN_MS[task.kind];
  const budget = base === null ? null : (deps.config.MEDIA_MAX_RUN_MS ?? base);
  return budget === null ? {} : { deadline: task.created_at.getTime() + budget, deadlineMessage: `no channel answered within ${budget / 1000} s` };
}

/**
 * Submits over the channel ladder (5xx or a connection failure moves to the
 * next channel) and records what came back for a retried submission
 * (capabilities/media/submission-claim.ts): an upstream task id in the task
 * document, anything else with the claim.
 */
async function submitOverLadder(deps: MediaActivityDeps, task: TaskDocument, facts: TaskFacts, holder: string): Promise<SubmitOutcome> {
  const entries = callFor(deps, task);
  const done = async (outcome: ProviderOutcome, sync?: SyncAnswer, tried?: CallAttempt[]): Promise<SubmitOutcome> => {
    if (tried) await patchTask(deps, task._id, { attempts_log: tried });
    await recordAnswer(deps.redis, task._id, { outcome, ...(sync ? { sync } : {}) });
    return { kind: 'done', outcome, task: tried ? { ...facts, attempts_log: tried } : facts, ...(sync ? { sync } : {}) };
  };
  if (entries.length === 0) return done(failed('upstream_unreachable', 'no channel is available for this model', 503));
  let climbed;
  const tried: CallAttempt[] = [];
  try {
    climbed = await climbLadder(entries, MEDIA_LADDER, loggedAttempt(tried, (e) => e.call.channel.id, async ({ provider, call }) => {
      failpoint('media.submit.before-upstream');
      const r = await provider.submit(call);
      failpoint('media.submit.after-upstream');
      return r;
    }), { ...ladderDeadline(deps, task), breaker: deps.channelHealth?.forLadder((e: LadderEntry) => e.call.channel.id) });
  } catch (err) {
    return done(outcomeOfFailure(err), undefined, tried);
  }
  const { value: r, channel: { call }, attempts } = climbed;
  if (r.kind === 'task') {
    // Recorded before returning: a retry after a crash polls this upstream task instead of submitting again.
    const upstream = { channel: call.channel.id, task_id: r.upstreamTaskId, attempts };
    await patchTask(deps, task._id, { upstream, attempts_log: tried });
    await releaseClaim(deps.redis, task._id, holder);
    return { kind: 'task', channelId: call.channel.id, upstreamTaskId: r.upstreamTaskId, task: { ...facts, upstream, attempts_log: tried } };
  }
  // A synchronous answer: kept with the claim for a retried submission; the settlement writes it to the task.
  return done(r.outcome, { channel: call.channel.id, attempts, attemptsLog: tried, answeredAt: Date.now() });
}

/** An upstream task an earlier attempt recorded in the document: polled, not submitted again. */
function recordedTask(task: TaskDocument, facts: TaskFacts): SubmitOutcome | undefined {
  if (!task.upstream?.task_id) return undefined;
  return { kind: 'task', channelId: task.upstream.channel, upstreamTaskId: task.upstream.task_id, task: facts };
}

/** Submit upstream over the channel ladder: 5xx or connection failure moves to the next channel. */
async function submit(deps: MediaActivityDeps, taskId: string): Promise<SubmitOutcome> {
  // One attempt at a time calls the vendor; a retried one takes the first's record, or waits for it.
  const claim = await claimSubmission(deps.redis, taskId);
  if (claim.kind === 'claimed' && claim.tookOver) {
    deps.log.warn('a submission claim was still held after the wait: submitting anyway (the vendor may see the request twice)', { task: taskId });
  }
  const task = await loadTask(deps, taskId);
  const facts = factsOf(task);
  if (claim.kind === 'answered') {
    const { outcome, sync } = claim.answer;
    return { kind: 'done', outcome, task: facts, ...(sync ? { sync } : {}) };
  }
  const recorded = recordedTask(task, facts);
  if (recorded) {
    await releaseClaim(deps.redis, task._id, claim.holder);
    return recorded;
  }
  return heartbeating(() => submitOverLadder(deps, task, facts, claim.holder), () => renewClaim(deps.redis, task._id, claim.holder));
}

/**
 * The submission's answer, unless the workflow cancels the activity first
 * (Temporal UI): then a CancelledFailure at once, as the workflow expects,
 * while the vendor call runs on and is recorded with the claim (never
 * settled here). A worker shutting down does not count: its submission
 * finishes as before.
 */
function unlessCancelled<T>(work: Promise<T>): Promise<T> {
  const ctx = Context.current();
  const cancelled = ctx.cancelled.catch((err: unknown) => {
    if (err instanceof CancelledFailure && err.message === 'CANCELLED') throw err;
    return work; // another reason (worker shutdown, a timeout): the work decides
  });
  return Promise.race([work, cancelled]);
}

/**
 * Side effects of the media task workflow. Every activity is idempotent by
 * the task id: a retry after a crash finds what the first try did (the
 * upstream task id, the settle op) and does not do it again.
 */
export function createMediaActivities(deps: MediaActivityDeps) {
  return {
    /** Submit upstream over the channel ladder (histories started before `submitAndSettleMediaTask`). */
    async submitMediaTask(input: { taskId: string }): Promise<SubmitOutcome> {
      return submit(deps, input.taskId);
    },

    /**
     * Submit, and settle a synchronous answer (or the ladder's failure) on
     * the spot: the workflow then has no settlement of its own to run (one
     * local activity and one workflow activation fewer a task). An upstream
     * task is returned for the workflow to poll, as `submitMediaTask` does.
     * The workflow waits for this activity's end when it is cancelled
     * (WAIT_CANCELLATION_COMPLETED, workflows/media-task.ts), so a
     * cancellation and this settlement never both settle: cancelled while
     * the vendor works, it ends cancelled and settles nothing; asked to stop
     * once the answer is in, or if the settlement here fails, it returns the
     * answer unsettled and the workflow settles it (`settleMediaTask`,
     * retried until it does, on the same outcome). A re-run after a
     * settlement here (a crash before the workflow recorded the activity)
     * finds the answer with the claim and settles again, idempotently.
     */
    async submitAndSettleMediaTask(input: { taskId: string }): Promise<SubmitOutcome | SettledOutcome> {
      const sub = await unlessCancelled(submit(deps, input.taskId));
      if (sub.kind !== 'done' || Context.current().cancellationSignal.aborted) return sub;
      try {
        const { costNano, state } = await inSpan('settle media task', () => settleTask(deps, { taskId: input.taskId, outcome: sub.outcome, task: sub.task, sync: sub.sync, progress: null }));
        return { kind: 'settled', state, costNano };
      } catch (err) {
        deps.log.warn('settling a synchronous answer in its submission failed: the workflow settles it', { task: input.taskId, err: (err as Error).message });
        return sub;
      }
    },

    /** One poll of the upstream task; records running state and progress when they change. Transient errors throw (retried). */
    async pollMediaTask(input: { taskId: string; channelId: string; upstreamTaskId: string }): Promise<PollOutcome> {
      const task = await loadTask(deps, input.taskId);
      const [entry] = callFor(deps, task, input.channelId);
      if (!entry?.provider.poll) throw ApplicationFailure.nonRetryable(`channel ${input.channelId} cannot be polled`, 'NoPoll');
      const r = await entry.provider.poll(entry.call, input.upstreamTaskId);
      failpoint('media.poll.after-upstream');
      const state: TaskState = r.outcome ? task.state : r.state === 'queued' ? 'queued' : 'running';
      const progress = r.progress ?? null;
      if (!r.outcome && (state !== task.state || progress !== task.progress)) {
        await patchTask(deps, task._id, { state, progress, ...(state === 'running' && !task.started_at ? { started_at: new Date() } : {}) });
        // The marker shows the task as submitted: once it changed, polls read the document.
        if (task.kind === 'image') await deps.redis.del(mediaRedisKeys.taskPending(task._id));
      }
      return { state: r.outcome ? r.outcome.state : state, progress, outcome: r.outcome };
    },

    /** Settle a task's outcome (see `settle`): the workflow's own step, retried until it succeeds. */
    async settleMediaTask(input: SettleInput): Promise<SettleResult> {
      return settleTask(deps, input);
    },

    /** Start the workflows of tasks a crashed gateway accepted but never started (capabilities/media/media-tasks.ts). */
    async resumeOrphanTasks(input: { now: number }): Promise<number> {
      return heartbeating(() => new MediaTasks(deps).resumeOrphans(ORPHAN_AFTER_MS, input.now));
    },

    /**
     * Hosted links are gone after their lifetime: mark them expired (they stay
     * as text). Stored uploads and large answers (task_files) are kept as long
     * as a replay may need them (7 days) and then deleted. Returns how many tasks changed.
     */
    async sweepExpiredLinks(input: { now: number }): Promise<number> {
      return heartbeating(async () => {
        const r = await deps.db.Task.updateMany(
          { 'result.links_expired': false, 'result.expires_at': { $lte: new Date(input.now) } },
          { $set: { 'result.links_expired': true, updated_at: new Date() } },
        );
        await deps.db.TaskFile.deleteMany({ created_at: { $lt: new Date(input.now - TASK_FILE_RETENTION_MS) } });
        return r.modifiedCount;
      });
    },
  };
}

export type MediaActivities = ReturnType<typeof createMediaActivities>;
export type { TaskOutcome };
