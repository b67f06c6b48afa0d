import { randomUUID } from 'node:crypto';
import type { Model } from 'mongoose';
import { ApplicationFailure } from '@temporalio/activity';
import type { SubmissionClaim, TaskDocument } from '../../domain/media/task';

/**
 * One upstream submission per task, whatever runs the submission again.
 *
 * The submission is a local activity: a retry after it threw, or a workflow
 * task that timed out under load and ran again on some worker, starts it
 * anew while the first attempt may still be waiting for the vendor. Without
 * a claim, both call the upstream and the vendor runs (and bills) two jobs
 * for one request. So an attempt first claims the task document for a short
 * lease, renews it while it waits for the vendor, and records what came
 * back (an async upstream's task id in `upstream`, a synchronous answer or
 * the ladder's failure in `submission.answer`). A second attempt that finds
 * a live claim waits for that record; one that finds a lapsed claim (its
 * holder died) takes it over and submits: the vendor may then see the
 * request twice, which only a vendor's own idempotency could prevent
 * (test/media/crash.test.ts, `media.submit.after-upstream`).
 */

/** How long a claim holds without a renewal; its holder renews every RENEW_MS. */
export const CLAIM_LEASE_MS = 10_000;
export const CLAIM_RENEW_MS = 2_000;
/** How often a waiting attempt reads the document. */
const WAIT_POLL_MS = 250;

type TaskModel = Model<TaskDocument>;

export type ClaimResult =
  /** This attempt holds the claim: the document as claimed. */
  | { kind: 'claimed'; holder: string; task: TaskDocument }
  /** Another attempt finished meanwhile: its record, read back. */
  | { kind: 'recorded'; task: TaskDocument };

/** The record of a finished submission on this document, if any. */
export function recordedSubmission(task: TaskDocument): boolean {
  return Boolean(task.upstream?.task_id || task.submission?.answer);
}

/**
 * Claims the submission of `taskId`, or waits until the attempt holding it
 * recorded its result (then returns the document) or let its lease lapse
 * (then claims it). `deadline` (Unix ms) bounds the wait.
 *
 * The claim is a conditional `updateOne` on the document read just before:
 * if it matched, nothing was recorded between the read and the claim (the
 * filter says so), so the read stands for the claimed document. Not
 * `findOneAndUpdate`: FerretDB v1 (the embedded store) runs it as a find and
 * then an update by id, so two attempts 13 ms apart both took the claim;
 * its `updateOne` filters and writes in one transaction, as MongoDB does.
 */
export async function claimSubmission(Task: TaskModel, taskId: string, deadline: number): Promise<ClaimResult> {
  const holder = randomUUID();
  for (;;) {
    const task = await Task.findById(taskId).lean<TaskDocument>();
    if (!task) throw ApplicationFailure.nonRetryable(`task ${taskId} not found`, 'TaskNotFound');
    if (recordedSubmission(task)) return { kind: 'recorded', task };
    const now = new Date();
    if (!task.submission || task.submission.lease_until.getTime() <= now.getTime()) {
      const claim: SubmissionClaim = { lease_until: new Date(now.getTime() + CLAIM_LEASE_MS), holder, answer: null };
      const r = await Task.updateOne(
        {
          _id: taskId,
          'upstream.task_id': null,
          'submission.answer': null,
          $or: [{ submission: null }, { 'submission.lease_until': { $lte: now } }],
        },
        { $set: { submission: claim } },
      );
      if (r.modifiedCount === 1) return { kind: 'claimed', holder, task: { ...task, submission: claim } };
      // Another attempt claimed or recorded meanwhile: read again after the pause.
    }
    if (Date.now() >= deadline) throw ApplicationFailure.retryable(`task ${taskId}: another submission attempt still holds it`);
    await new Promise((res) => setTimeout(res, WAIT_POLL_MS));
  }
}

/** Extends the holder's lease (nothing if the claim passed to another attempt meanwhile). */
export async function renewClaim(Task: TaskModel, taskId: string, holder: string): Promise<void> {
  await Task.updateOne(
    { _id: taskId, 'submission.holder': holder },
    { $set: { 'submission.lease_until': new Date(Date.now() + CLAIM_LEASE_MS) } },
  );
}

/** Records the holder's answer and ends its lease, with `set` (other fields of the task) in the same write. */
export async function recordAnswer(
  Task: TaskModel, taskId: string, holder: string,
  answer: NonNullable<SubmissionClaim['answer']> | null, set: Partial<TaskDocument> = {},
): Promise<void> {
  const submission: SubmissionClaim = { lease_until: new Date(0), holder, answer };
  await Task.updateOne({ _id: taskId }, { $set: { ...set, submission, updated_at: new Date() } });
}
