import test from 'ava';
import { MockActivityEnvironment } from '@temporalio/testing';
import { startGateway, type TestGateway } from '../helpers/stack';
import { createMediaActivities, type SubmitOutcome } from '../../activities/media';
import { CLAIM_LEASE_MS, claimSubmission } from '../../capabilities/media/submission-claim';
import { mediaRedisKeys } from '../../capabilities/media/store';
import type { TaskDocument } from '../../domain/media/task';

/**
 * The submission runs again (a local activity retried, a workflow task timed
 * out under load and run on another worker) while the first attempt still
 * waits for the vendor: the vendor sees one request, and every attempt
 * hands the workflow the same answer. The gateway here has no worker: the
 * test runs the submission activity itself, on a simulator that answers
 * after 400 ms so that the attempts overlap.
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, mediaDelayMs: 400 });
});
test.after.always(async () => gw?.close());

/** An async submission (its workflow never runs here: no worker polls the queue). */
async function submitted(model: string, prompt: string): Promise<TaskDocument> {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const r = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, prompt, n: 1, async: true }),
  });
  const body = (await r.json()) as { id: string };
  if (r.status !== 200) throw new Error(`submission answered ${r.status}: ${JSON.stringify(body)}`);
  return (await gw.deps.db.Task.findById(body.id).lean<TaskDocument>())!;
}

/** What the simulator's channels received with this prompt. */
async function received(prompt: string, channels: string[]): Promise<number> {
  let n = 0;
  for (const channel of channels) {
    const r = (await gw.control('GET', `/media/tasks?channel=${channel}`)) as { tasks: Array<{ body: { prompt?: string } }> };
    n += r.tasks.filter((s) => s.body.prompt === prompt).length;
  }
  return n;
}

const submitOnce = (taskId: string): Promise<SubmitOutcome> =>
  new MockActivityEnvironment().run(createMediaActivities(gw.deps).submitMediaTask, { taskId });

const SYNC = ['openai-images-a', 'openai-images-b'];
const ASYNC = ['image-tasks-a', 'image-tasks-b'];

test('a synchronous upstream: three overlapping attempts, one vendor call, one answer for all', async (t) => {
  const task = await submitted('gpt-image-1', 'claim sync');
  const outcomes = await Promise.all([submitOnce(task._id), submitOnce(task._id), submitOnce(task._id)]);
  t.is(await received('claim sync', SYNC), 1);
  t.is(outcomes[0].kind, 'done');
  for (const o of outcomes) t.deepEqual(o, outcomes[0]);
  // Run again later (a workflow task replayed after the answer): the record, no vendor call.
  t.deepEqual(await submitOnce(task._id), outcomes[0]);
  t.is(await received('claim sync', SYNC), 1);
  // The answer is kept with the claim's key, for a day.
  const kept = (await gw.deps.redis.get(mediaRedisKeys.taskSubmission(task._id)))!;
  t.true(kept.startsWith('a:'));
  t.true((await gw.deps.redis.ttl(mediaRedisKeys.taskSubmission(task._id))) > 23 * 3600);
});

test('an async upstream: overlapping attempts poll the one upstream task the first created', async (t) => {
  const task = await submitted('flux-kontext-pro', 'claim async');
  const outcomes = await Promise.all([submitOnce(task._id), submitOnce(task._id)]);
  t.is(await received('claim async', ASYNC), 1);
  t.is(outcomes[0].kind, 'task');
  t.deepEqual(outcomes[1], outcomes[0]);
});

test('a claim whose holder died (killed mid-call: its lease lapses, nothing recorded) is taken over, and the vendor sees the request again', async (t) => {
  const task = await submitted('gpt-image-1', 'claim lapsed');
  const first = await submitOnce(task._id);
  // What a worker killed mid-call leaves once its lease lapsed: no key, no answer.
  await gw.deps.redis.del(mediaRedisKeys.taskSubmission(task._id));
  const o = await submitOnce(task._id);
  t.is(o.kind, 'done');
  t.not((o as { sync?: { answeredAt: number } }).sync?.answeredAt, (first as { sync?: { answeredAt: number } }).sync?.answeredAt);
  t.is(await received('claim lapsed', SYNC), 2);
});

test('a live claim held by another attempt is waited for, then taken over once it lapses', async (t) => {
  t.timeout(60_000);
  const task = await submitted('gpt-image-1', 'claim waits');
  // Another attempt's live claim, never renewed: it lapses in 1.5 s.
  await gw.deps.redis.set(mediaRedisKeys.taskSubmission(task._id), 'c:slow', 'PX', 1_500);
  const started = Date.now();
  const o = await submitOnce(task._id);
  t.is(o.kind, 'done');
  t.true(Date.now() - started >= 1_400, 'waited for the live claim');
  t.true(Date.now() - started < CLAIM_LEASE_MS + 5_000);
  t.is(await received('claim waits', SYNC), 1);
});

test('a claim its holder keeps renewing past the wait (a hung call) is taken over: nobody waits for ever', async (t) => {
  const task = await submitted('gpt-image-1', 'claim zombie');
  const key = mediaRedisKeys.taskSubmission(task._id);
  await gw.deps.redis.set(key, 'c:zombie', 'PX', 120_000);
  const started = Date.now();
  const claim = await claimSubmission(gw.deps.redis, task._id, 600);
  t.is(claim.kind, 'claimed');
  t.true(claim.kind === 'claimed' && claim.tookOver);
  t.true(Date.now() - started >= 550);
  t.is(await gw.deps.redis.get(key), claim.kind === 'claimed' ? claim.holder : null);
});
