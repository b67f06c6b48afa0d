import test from 'ava';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { startGateway, type TestGateway } from '../helpers/stack';
import { createWorker, STICKY_SCHEDULE_TO_START } from '../../workers/worker';
import { createActivities } from '../../activities';
import { WORKFLOWS_PATH } from '../../platform/temporal';
import { WORKFLOW_INTERCEPTORS_PATH } from '../../platform/tracing/temporal';
import { PATCH_ID } from './altered/changed-step';

/**
 * The cut-down `npm run swap` (dev/bench/deploy-swap.ts has the 200-task run and
 * the gateway swap): tasks in flight on worker build A, build B (a changed step
 * behind patched(), test/workflows/altered/changed-step.ts) starts beside it,
 * A drains and stops, more tasks start on B alone. Every task ends once and is
 * charged once; no workflow task fails; only runs B started take the new step.
 */

const FINAL = ['succeeded', 'failed', 'expired', 'cancelled'];
const CHANGED_STEP_PATH = new URL('./altered/changed-step.ts', import.meta.url).pathname;
let gw: TestGateway;

test.before(async () => {
  // flux-kontext-pro tasks are due 4 s after their submission, polled every 300 ms.
  gw = await startGateway({ MEDIA_POLL_INTERVAL_MS: '300' }, { simulator: true, mediaDelayMs: 4_000 });
});
test.after.always(async () => {
  await gw?.close();
});

test('a deploy swap: tasks started on build A finish on build B, each ends and is charged once, no workflow task fails', async (t) => {
  t.timeout(180_000);
  const a = await createWorker(gw.config, gw.deps);
  const runA = a.worker.run();
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_PATH, CHANGED_STEP_PATH],
    logger: { log() {}, info() {}, warn() {}, error: console.error, debug() {}, trace() {} },
  });
  const acc = await gw.newAccount();
  t.is((await gw.admin('POST', `/accounts/${acc.id}/topups`, { amount_usd: '200' })).status, 201);
  const { key } = await gw.newKey(acc.id);
  const before = await gw.deps.wallet.balance(acc.id);
  const submit = async () => {
    const r = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flux-kontext-pro', prompt: 'a fox', async: true }),
    });
    t.is(r.status, 200);
    return ((await r.json()) as { id: string }).id;
  };
  const onA = await Promise.all(Array.from({ length: 20 }, submit));

  const connection = await NativeConnection.connect({ address: gw.config.TEMPORAL_ADDRESS });
  const b = await Worker.create({
    connection, namespace: gw.config.TEMPORAL_NAMESPACE, taskQueue: gw.config.TEMPORAL_TASK_QUEUE,
    workflowBundle: { code }, activities: createActivities(gw.deps), stickyQueueScheduleToStartTimeout: STICKY_SCHEDULE_TO_START,
  });
  const runB = b.run();
  try {
    const openAtSwap = await gw.deps.db.Task.countDocuments({ _id: { $in: onA }, state: { $nin: FINAL } });
    t.true(openAtSwap > 0, 'tasks were in flight when A stopped');
    a.worker.shutdown();
    await runA;
    await a.connection.close();
    const onB = await Promise.all(Array.from({ length: 5 }, submit));
    const all = [...onA, ...onB];

    for (let i = 0; ; i++) {
      if ((await gw.deps.db.Task.countDocuments({ _id: { $in: all }, state: { $nin: FINAL } })) === 0) break;
      if (i > 600) t.fail('tasks never ended');
      await new Promise((r) => setTimeout(r, 200));
    }
    let failedTasks = 0;
    const patchedRuns: string[] = [];
    for (const id of all) {
      const h = gw.deps.temporal.workflow.getHandle(id);
      t.is((await h.describe()).status.name, 'COMPLETED', id);
      for (const e of (await h.fetchHistory()).events ?? []) {
        if (e.workflowTaskFailedEventAttributes) failedTasks++;
        const m = e.markerRecordedEventAttributes;
        const text = Object.values(m?.details ?? {}).flatMap((p) => p.payloads ?? []).map((p) => Buffer.from(p.data ?? []).toString()).join(' ');
        if (m?.markerName === 'core_patch' && text.includes(PATCH_ID)) patchedRuns.push(id);
      }
    }
    t.is(failedTasks, 0, 'no workflow task failed (no nondeterminism error)');
    for (const id of onB) t.true(patchedRuns.includes(id), `${id} started on B and took the new step`);

    await gw.deps.wallet.journal.flush();
    const rows = await gw.deps.db.Ledger.find({ ref: { $in: all } }).lean<Array<{ kind: string }>>();
    t.is(rows.filter((r) => r.kind === 'reserve').length, all.length);
    t.is(rows.filter((r) => r.kind === 'settle').length, all.length);
    const tasks = await gw.deps.db.Task.find({ _id: { $in: all } }).lean<Array<{ state: string; cost_nano: number }>>();
    t.true(tasks.every((x) => x.state === 'succeeded'));
    t.is(await gw.deps.wallet.balance(acc.id), before - tasks.reduce((s, x) => s + x.cost_nano, 0));
  } finally {
    b.shutdown();
    await runB.catch(() => undefined);
    await connection.close();
  }
});
