import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../platform/redis';
import { releaseHeld, renewHeld } from '../../platform/lock';
import type { RecordedSubmission } from '../../domain/media/task';
import { mediaRedisKeys } from './store';

/**
 * One upstream submission per task, whatever runs the submission again.
 *
 * The submission is a local activity: a retry after it threw, or a workflow
 * task that timed out under load and ran again on some worker, starts it
 * anew while the first attempt may still be waiting for the vendor, or after
 * a synchronous answer that only the first attempt's workflow task held.
 * Without a claim, both call the upstream and the vendor runs (and bills)
 * two jobs for one request. So an attempt first claims the task's Redis key
 * for a short lease (`c:{holder}`, SET NX), renews it while it waits for the
 * vendor, and records what came back: an async upstream's task id in the
 * task document (then frees the key), a synchronous answer or the ladder's
 * failure in the key (`a:{json}`, kept a day). A second attempt that finds a
 * live claim waits for that record, up to CLAIM_WAIT_MS; one that finds the
 * key gone (the holder died and its lease lapsed) claims it and submits: the
 * vendor may then see the request twice, which only a vendor's own
 * idempotency could prevent (test/media/crash.test.ts, `media.submit.after-upstream`).
 *
 * Redis, not the task document: FerretDB (the embedded store) makes no
 * conditional update atomic (platform/lock.ts), and two more task writes a
 * submission would cost the hot path of every image task.
 */

/** How long a claim holds without a renewal; its holder renews every CLAIM_RENEW_MS. */
export const CLAIM_LEASE_MS = 10_000;
export const CLAIM_RENEW_MS = 2_000;
/** How long a synchronous answer is kept for a retried submission (the settlement follows within seconds). */
const ANSWER_TTL_S = 24 * 3600;
/** How often a waiting attempt reads the key. */
const WAIT_POLL_MS = 250;

export type ClaimResult =
  /**
   * This attempt holds the claim: `holder` renews and records. The task
   * document, read after the claim, shows whether an earlier holder recorded
   * an upstream task before it freed the key.
   */
  | { kind: 'claimed'; holder: string; tookOver?: true }
  /** An earlier attempt's synchronous answer or failure. */
  | { kind: 'answered'; answer: RecordedSubmission };

/**
 * How long an attempt waits for a claim that its holder keeps renewing before it takes the claim over
 * and submits itself: a vendor's synchronous answer comes well within it, and a holder that never ends
 * (its call hung, or it kept renewing after its run was given up) holds nobody longer. The vendor may
 * then see the request twice, as it did for every retry before the claim.
 */
export const CLAIM_WAIT_MS = 60_000;

/** Takes `key` over from the holder seen (only if it still holds it). */
const TAKE_OVER = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) else return false end";

/**
 * Claims the submission of `taskId`, or waits while another attempt holds it
 * and returns its answer if it left one. After CLAIM_WAIT_MS of a live claim
 * it takes the claim over (`tookOver`).
 */
export async function claimSubmission(redis: RedisClient, taskId: string, waitMs = CLAIM_WAIT_MS): Promise<ClaimResult> {
  const key = mediaRedisKeys.taskSubmission(taskId);
  const holder = `c:${randomUUID()}`;
  const deadline = Date.now() + waitMs;
  for (;;) {
    if ((await redis.set(key, holder, 'PX', CLAIM_LEASE_MS, 'NX')) === 'OK') return { kind: 'claimed', holder };
    const v = await redis.get(key);
    // Our own SET whose reply was lost (Redis restarting: the client sends unanswered commands again).
    if (v === holder) return { kind: 'claimed', holder };
    if (v?.startsWith('a:')) return { kind: 'answered', answer: JSON.parse(v.slice(2)) as RecordedSubmission };
    if (v && Date.now() >= deadline && (await redis.eval(TAKE_OVER, 1, key, v, holder, String(CLAIM_LEASE_MS))) === 'OK') {
      return { kind: 'claimed', holder, tookOver: true };
    }
    await new Promise((res) => setTimeout(res, WAIT_POLL_MS));
  }
}

/** Extends the holder's lease (nothing if it lapsed and another attempt claimed the key meanwhile). */
export async function renewClaim(redis: RedisClient, taskId: string, holder: string): Promise<void> {
  await renewHeld(redis, mediaRedisKeys.taskSubmission(taskId), holder, CLAIM_LEASE_MS);
}

/** Records a synchronous answer or a failure for a retried submission (ends the claim). */
export async function recordAnswer(redis: RedisClient, taskId: string, answer: RecordedSubmission): Promise<void> {
  await redis.set(mediaRedisKeys.taskSubmission(taskId), `a:${JSON.stringify(answer)}`, 'EX', ANSWER_TTL_S);
}

/** Ends the holder's claim once its record is in the task document (an upstream task id). */
export async function releaseClaim(redis: RedisClient, taskId: string, holder: string): Promise<void> {
  await releaseHeld(redis, mediaRedisKeys.taskSubmission(taskId), holder);
}
