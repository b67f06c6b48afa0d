// The gateway starts workflows by name (domain/workflow-ids.ts) so it never loads workflow code; the
// names must stay those of the worker's functions, or every start would fail at run time.
import test from 'ava';
import { MEDIA_TASK_WORKFLOW, TASK_WEBHOOK_WORKFLOW } from '../../domain/workflow-ids';
import * as workflows from '../../workflows/index';
import { taskQueueFor, WORKER_QUEUES, WORKFLOW_QUEUE, workflowsOf } from '../../domain/task-queues';
import { workflowsPathOf } from '../../platform/temporal';

test('the names the gateway starts workflows by are exported by the worker\'s workflows entry', (t) => {
  for (const name of [MEDIA_TASK_WORKFLOW, TASK_WEBHOOK_WORKFLOW]) {
    t.is(typeof (workflows as Record<string, unknown>)[name], 'function', name);
    t.is(((workflows as Record<string, unknown>)[name] as { name: string }).name, name);
  }
});

test('each worker queue\'s workflow entry exports exactly the workflows domain/task-queues.ts puts on that queue', async (t) => {
  const all = Object.keys(workflows).sort();
  t.deepEqual(Object.keys(WORKFLOW_QUEUE).sort(), all, 'every workflow has a queue');
  for (const queue of WORKER_QUEUES) {
    const entry = (await import(workflowsPathOf(queue))) as Record<string, unknown>;
    t.deepEqual(Object.keys(entry).sort(), workflowsOf(queue).sort(), queue);
  }
  t.is(taskQueueFor('q', 'mediaTaskWorkflow'), 'q');
  t.is(taskQueueFor('q', 'kbBuildWorkflow'), 'q-knowledge');
  t.is(taskQueueFor('q', 'taskWebhookWorkflow'), 'q-webhooks');
});
