import type { RedisClient } from '../../platform/redis';
import type { ProviderOutcome, SyncAnswer } from '../../domain/media/task';
import { mediaRedisKeys } from './store';

/**
 * One outcome per task, whichever settlement runs first.
 *
 * A task's activities run as local activities inside a workflow task, so
 * their effects can outlive the workflow task that ran them: when a cancel
 * request (Temporal UI) reaches the server while a worker runs the task's
 * first workflow task (a synchronous vendor answering, then its settlement;
 * or a poll that saw the outcome, then the settlement), the server refuses
 * that task's completion, the markers of its activities are lost, and the
 * workflow runs again from the start, sees the cancel first and settles
 * "cancelled". The wallet op `{task}:settle` is applied once, so before this
 * the wallet kept the first settlement's charge while the task and its usage
 * row said "cancelled, nothing charged" (test/media/settlement-races.test.ts).
 *
 * The gateway's release of a task it could not start (capabilities/media/
 * media-tasks.ts) is a settlement too ("not started"): a workflow whose
 * start's answer was lost may have run and settled the task before it.
 *
 * So a settlement first proposes its outcome here (SET NX, one round trip);
 * the first proposal is the decision, and every settlement of the task, this
 * one or a later one with another outcome, applies the decision: the same
 * refund, usage row and final fields, idempotently. The decision is kept a
 * day, as the submission's answer is (capabilities/media/submission-claim.ts):
 * a settlement that conflicts with an earlier one runs again within seconds
 * of it (the workflow task's retry), or minutes when every worker was down.
 */
export interface SettlementDecision {
  outcome: ProviderOutcome;
  sync?: SyncAnswer;
  progress: number | null;
}

const DECISION_TTL_S = 24 * 3600;

/** Sets KEYS[1] to ARGV[1] unless it is set; returns the value it had (nil: this proposal decided). */
const PROPOSE = "local v = redis.call('get', KEYS[1]) if v then return v end redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2]) return false";

/** The task's settlement decision: `proposal` if it is the first, the first one's otherwise. */
export async function decideSettlement(redis: RedisClient, taskId: string, proposal: SettlementDecision): Promise<SettlementDecision> {
  const earlier = (await redis.eval(PROPOSE, 1, mediaRedisKeys.taskSettlement(taskId), JSON.stringify(proposal), String(DECISION_TTL_S))) as string | null;
  return earlier ? (JSON.parse(earlier) as SettlementDecision) : proposal;
}
