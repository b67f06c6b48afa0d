// The gateway starts workflows by name (domain/workflow-ids.ts) so it never loads workflow code; the
// names must stay those of the worker's functions, or every start would fail at run time.
import test from 'ava';
import { MEDIA_TASK_WORKFLOW, TASK_WEBHOOK_WORKFLOW } from '../../domain/workflow-ids';
import * as workflows from '../../workflows/index';

test('the names the gateway starts workflows by are exported by the worker\'s workflows entry', (t) => {
  for (const name of [MEDIA_TASK_WORKFLOW, TASK_WEBHOOK_WORKFLOW]) {
    t.is(typeof (workflows as Record<string, unknown>)[name], 'function', name);
    t.is(((workflows as Record<string, unknown>)[name] as { name: string }).name, name);
  }
});
