import test from 'ava';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { temporalBinary } from '../../dev/scripts/lib/tools';
import { WORKFLOWS_PATH, workflowBundleOf } from '../../platform/temporal';
import { mediaTaskWorkflow, type MediaTaskInput } from '../../workflows/media-task';
import type { MediaActivities, PollOutcome, SettledOutcome, SubmitOutcome } from '../../activities/media';
import type { ProviderOutcome } from '../../domain/media/task';

/**
 * The media task workflow on its own: a local Temporal dev server (the
 * cached CLI binary, no stack), one worker, and activities scripted per task
 * id. Each case runs in milliseconds of workflow time.
 */

interface Script {
  submit: () => Promise<SubmitOutcome>;
  /** How the submission ends once `submit` answered 'done' (default: it settles the answer itself, as activities/media.ts does). */
  afterDone?: (sub: Extract<SubmitOutcome, { kind: 'done' }>, settle: () => Promise<SettledOutcome>) => Promise<SubmitOutcome | SettledOutcome>;
  poll?: (n: number) => Promise<PollOutcome>;
  polls: number;
  settled: ProviderOutcome[];
  /** Who settled each entry of `settled`. */
  settledBy: Array<'submission' | 'workflow'>;
  /** Activity types in the order they ran. */
  ran: string[];
}

const scripts = new Map<string, Script>();
const QUEUE = 'media-task-unit';

function settleScripted(s: Script, outcome: ProviderOutcome, by: 'submission' | 'workflow') {
  s.settled.push(outcome);
  s.settledBy.push(by);
  return { costNano: outcome.state === 'succeeded' ? 7 * outcome.units : 0 };
}

const activities: Pick<MediaActivities, 'submitMediaTask' | 'submitAndSettleMediaTask' | 'pollMediaTask' | 'settleMediaTask'> = {
  async submitMediaTask({ taskId }) {
    const s = scripts.get(taskId)!;
    s.ran.push('submitMediaTask');
    return s.submit();
  },
  async submitAndSettleMediaTask({ taskId }) {
    const s = scripts.get(taskId)!;
    s.ran.push('submitAndSettleMediaTask');
    const sub = await s.submit();
    if (sub.kind !== 'done') return sub;
    const settle = async (): Promise<SettledOutcome> => ({ kind: 'settled', state: sub.outcome.state, ...settleScripted(s, sub.outcome, 'submission') });
    return s.afterDone ? s.afterDone(sub, settle) : settle();
  },
  async pollMediaTask({ taskId }) {
    const s = scripts.get(taskId)!;
    s.ran.push('pollMediaTask');
    return s.poll!(++s.polls);
  },
  async settleMediaTask({ taskId, outcome }) {
    const s = scripts.get(taskId)!;
    s.ran.push('settleMediaTask');
    return settleScripted(s, outcome, 'workflow');
  },
};

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;

test.before(async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  env = await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: temporalBinary() } } });
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: QUEUE,
    ...(process.env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: workflowBundleOf(process.env.WORKFLOW_BUNDLE, 'media') } } : { workflowsPath: WORKFLOWS_PATH }),
    activities,
  });
  running = worker.run();
});

test.after.always(async () => {
  worker?.shutdown();
  await running?.catch(() => undefined);
  await env?.teardown();
});

let seq = 0;
function task(script: Omit<Script, 'polls' | 'settled' | 'settledBy' | 'ran'>, input: Partial<MediaTaskInput> = {}) {
  const taskId = `task_unit_${process.pid}_${++seq}`;
  const s: Script = { ...script, polls: 0, settled: [], settledBy: [], ran: [] };
  scripts.set(taskId, s);
  const args: MediaTaskInput = { taskId, pollIntervalMs: 5, maxRunMs: null, ...input };
  const handle = env.client.workflow.start(mediaTaskWorkflow, { taskQueue: QUEUE, workflowId: taskId, args: [args] });
  return { s, handle };
}

const succeeded = (units: number): ProviderOutcome => ({ state: 'succeeded', units, urls: ['http://sim/1.png'], expiresAt: null });
const running_ = async (): Promise<PollOutcome> => ({ state: 'running', progress: 10 });

test('a synchronous answer is settled on its actual output by the submission itself: one activity, no poll', async (t) => {
  const { s, handle } = task({ submit: async () => ({ kind: 'done', outcome: succeeded(2) }) });
  const result = await (await handle).result();
  t.deepEqual(result, { state: 'succeeded', costNano: 14 });
  t.deepEqual(s.settled, [succeeded(2)]);
  t.deepEqual(s.settledBy, ['submission']);
  t.deepEqual(s.ran, ['submitAndSettleMediaTask']);
  t.is(s.polls, 0);
});

test('a synchronous answer the submission could not settle is settled by the workflow, on the same outcome', async (t) => {
  const { s, handle } = task({ submit: async () => ({ kind: 'done', outcome: succeeded(3) }), afterDone: async (sub) => sub });
  t.deepEqual(await (await handle).result(), { state: 'succeeded', costNano: 21 });
  t.deepEqual(s.settled, [succeeded(3)]);
  t.deepEqual(s.settledBy, ['workflow']);
  t.deepEqual(s.ran, ['submitAndSettleMediaTask', 'settleMediaTask']);
});

test('cancelled while the vendor works: the submission ends cancelled and the workflow refunds in full', async (t) => {
  let started = false;
  const { s, handle } = task({
    submit: async () => {
      started = true;
      await Context.current().cancelled; // rejects with the cancellation, as activities/media.ts's submission does
      throw new Error('unreachable');
    },
  });
  const h = await handle;
  while (!started) await new Promise((r) => setTimeout(r, 5));
  await h.cancel();
  t.deepEqual(await h.result(), { state: 'cancelled', costNano: 0 });
  t.is(s.settled.length, 1);
  t.deepEqual(s.settledBy, ['workflow']);
  t.like(s.settled[0], { state: 'cancelled', units: 0, errorCode: 'task_cancelled', clientStatus: 499 });
});

test('cancelled while the submission settles: the workflow waits for it and settles nothing more', async (t) => {
  let settling = false;
  const { s, handle } = task({
    submit: async () => ({ kind: 'done', outcome: succeeded(1) }),
    afterDone: async (_sub, settle) => {
      settling = true;
      // The settlement ignores the cancellation and finishes (activities/media.ts): the workflow must take its result.
      while (!Context.current().cancellationSignal.aborted) await new Promise((r) => setTimeout(r, 5));
      return settle();
    },
  });
  const h = await handle;
  while (!settling) await new Promise((r) => setTimeout(r, 5));
  await h.cancel();
  t.deepEqual(await h.result(), { state: 'succeeded', costNano: 7 });
  t.deepEqual(s.settled, [succeeded(1)]);
  t.deepEqual(s.settledBy, ['submission']);
  t.deepEqual(s.ran, ['submitAndSettleMediaTask']);
});

test('an upstream task is polled until its outcome, then settled once', async (t) => {
  const { s, handle } = task({
    submit: async () => ({ kind: 'task', channelId: 'c1', upstreamTaskId: 'up_1' }),
    poll: async (n) => (n < 3 ? { state: 'running', progress: n * 30 } : { state: 'succeeded', progress: 100, outcome: succeeded(1) }),
  });
  t.deepEqual(await (await handle).result(), { state: 'succeeded', costNano: 7 });
  t.is(s.polls, 3);
  t.deepEqual(s.settled, [succeeded(1)]);
});

test('a submission that fails for good is refunded in full as an upstream error', async (t) => {
  const { s, handle } = task({ submit: async () => { throw ApplicationFailure.nonRetryable('vendor refused', 'Refused'); } });
  t.deepEqual(await (await handle).result(), { state: 'failed', costNano: 0 });
  t.is(s.settled.length, 1);
  t.like(s.settled[0], { state: 'failed', units: 0, errorCode: 'upstream_error', clientStatus: 502 });
});

test('a failed upstream outcome is settled as it came (a refund)', async (t) => {
  const failed: ProviderOutcome = { state: 'failed', units: 0, urls: [], expiresAt: null, errorCode: 'content_policy', errorMessage: 'no', clientStatus: 400 };
  const { s, handle } = task({
    submit: async () => ({ kind: 'task', channelId: 'c1', upstreamTaskId: 'up_2' }),
    poll: async () => ({ state: 'failed', progress: null, outcome: failed }),
  });
  t.deepEqual(await (await handle).result(), { state: 'failed', costNano: 0 });
  t.deepEqual(s.settled, [failed]);
});

test('a task still running past its lifetime expires with a full refund (504 task_expired)', async (t) => {
  const { s, handle } = task({ submit: async () => ({ kind: 'task', channelId: 'c1', upstreamTaskId: 'up_3' }), poll: running_ }, { maxRunMs: 60 });
  t.deepEqual(await (await handle).result(), { state: 'expired', costNano: 0 });
  t.is(s.settled.length, 1);
  t.like(s.settled[0], { state: 'expired', units: 0, errorCode: 'task_expired', clientStatus: 504 });
});

test('cancelling the workflow (Temporal UI) still settles: cancelled, refunded in full', async (t) => {
  const { s, handle } = task({ submit: async () => ({ kind: 'task', channelId: 'c1', upstreamTaskId: 'up_4' }), poll: running_ });
  const h = await handle;
  while (s.polls < 2) await new Promise((r) => setTimeout(r, 5));
  await h.cancel();
  t.deepEqual(await h.result(), { state: 'cancelled', costNano: 0 });
  t.is(s.settled.length, 1);
  t.like(s.settled[0], { state: 'cancelled', units: 0, errorCode: 'task_cancelled', clientStatus: 499 });
});
