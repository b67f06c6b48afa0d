import test from 'ava';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import * as workflows from '../../workflows/index';
import { WORKFLOWS_PATH, workflowBundleOf } from '../../platform/temporal';
import { WORKER_QUEUES, WORKFLOW_QUEUE, type WorkflowType } from '../../domain/task-queues';
import { WORKFLOW_INTERCEPTORS_PATH } from '../../platform/tracing/temporal';
import { localActivityTypes, readHistoryFiles, type HistoryFile } from './history-files';
import { UNGUARDED_PREFIX } from './altered/changed-step';

/**
 * Every recorded history (test/workflows/histories/, `npm run record:histories`)
 * replays against the current workflow code: a change that would break a
 * workflow in flight at a deploy fails here (docs/workflow-changes.md).
 * No services needed: replay runs the workflow code on the history alone.
 */

const CHANGED_STEP_PATH = new URL('./altered/changed-step.ts', import.meta.url).pathname;
const histories = readHistoryFiles();
const silent = { log() {}, info() {}, warn() {}, error: console.error, debug() {}, trace() {} };

test.before(() => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
});

/**
 * The code each history replays against: the worker's own bundle of the history's queue (npm test builds
 * one per queue, WORKFLOW_BUNDLE names their stem), else a bundle of workflows/ as the worker makes it.
 */
function currentCode(files: HistoryFile[]): Array<{ options: Pick<ReplayWorkerOptions, 'workflowBundle' | 'workflowsPath' | 'interceptors'>; files: HistoryFile[] }> {
  const stem = process.env.WORKFLOW_BUNDLE;
  if (!stem) return [{ options: { workflowsPath: WORKFLOWS_PATH, interceptors: { workflowModules: [WORKFLOW_INTERCEPTORS_PATH] } }, files }];
  return WORKER_QUEUES.map((queue) => ({
    options: { workflowBundle: { codePath: workflowBundleOf(stem, queue) } },
    files: files.filter((h) => WORKFLOW_QUEUE[h.workflowType as WorkflowType] === queue),
  })).filter((g) => g.files.length > 0);
}

async function replay(options: ReplayWorkerOptions, files: HistoryFile[], idOf = (h: HistoryFile) => h.workflowId) {
  const byId = new Map(files.map((h) => [idOf(h), h.name]));
  const results: Array<{ name: string; error?: Error }> = [];
  for await (const r of Worker.runReplayHistories(options, files.map((h) => ({ workflowId: idOf(h), history: h.history })))) {
    results.push({ name: byId.get(r.workflowId) ?? r.workflowId, error: r.error });
  }
  return results;
}

test('every workflow the worker runs has recorded histories, and every media path is among them', (t) => {
  const types = new Set(histories.map((h) => h.workflowType));
  for (const name of Object.keys(workflows)) t.true(types.has(name), `no recorded history of ${name}: run npm run record:histories`);
  const media = histories.filter((h) => h.workflowType === 'mediaTaskWorkflow').map((h) => h.name);
  for (const path of ['succeeded', 'failed-refunded', 'cancelled', 'expired']) {
    t.true(media.some((n) => n.endsWith(`-${path}`)), `no media history of the ${path} path`);
  }
  t.true(histories.some((h) => h.workflowType === 'taskWebhookWorkflow' && h.name.includes('retries')), 'no webhook delivered after retries');
  const batches = histories.filter((h) => h.workflowType === 'batchWorkflow').map((h) => h.name);
  for (const path of ['completed', 'cancelled']) t.true(batches.some((n) => n.includes(path)), `no batch history of the ${path} path`);
});

test('every recorded history replays against the current workflow code', async (t) => {
  t.timeout(120_000);
  const unknown = histories.filter((h) => !(h.workflowType in WORKFLOW_QUEUE)).map((h) => h.name);
  t.deepEqual(unknown, [], 'histories of a workflow type no queue runs');
  const results = [];
  for (const g of currentCode(histories)) results.push(...(await replay({ ...g.options, replayName: 'fixtures' }, g.files)));
  t.is(results.length, histories.length);
  const failed = results.filter((r) => r.error).map((r) => `${r.name}: ${r.error!.name}: ${r.error!.message.split('\n')[0]}`);
  t.deepEqual(failed, []);
});

test('a changed step is caught: unguarded it fails replay with a DeterminismViolationError, behind patched() it replays', async (t) => {
  t.timeout(180_000);
  // Media histories that reached the workflow's own settlement: the changed step (a timer before it) sits right there.
  // (A synchronous answer settled by its submission has no such step: nothing changes for it.)
  const settled = histories.filter((h) => h.workflowType === 'mediaTaskWorkflow' && h.history.events.some((e) => e.workflowExecutionCompletedEventAttributes)
    && localActivityTypes(h).includes('settleMediaTask'));
  t.true(settled.length >= 4);
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_PATH, CHANGED_STEP_PATH], logger: silent });
  const changed: ReplayWorkerOptions = { workflowBundle: { code }, replayName: 'changed-step' };

  const unguarded = await replay(changed, settled, (h) => `${UNGUARDED_PREFIX}${h.workflowId}`);
  t.is(unguarded.length, settled.length);
  for (const r of unguarded) t.true(r.error instanceof DeterminismViolationError, `${r.name}: ${r.error ? `${r.error.name}: ${r.error.message}` : 'replayed without an error'}`);

  const guarded = await replay(changed, settled);
  t.deepEqual(guarded.filter((r) => r.error).map((r) => `${r.name}: ${r.error!.message.split('\n')[0]}`), []);
});
