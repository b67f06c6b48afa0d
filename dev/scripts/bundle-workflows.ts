/**
 * Bundle each worker queue's workflows once (the worker otherwise does it at every start):
 *   npx tsx dev/scripts/bundle-workflows.ts [out.js]     then WORKFLOW_BUNDLE=out.js
 * writes out.media.js, out.knowledge.js and out.webhooks.js (platform/temporal.ts `workflowBundleOf`).
 * Used by the Docker image and by `npm test` (many workers, one bundle per queue).
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';
import { workflowBundleOf, workflowsPathOf } from '../../platform/temporal';
import { WORKER_QUEUES } from '../../domain/task-queues';
import { WORKFLOW_INTERCEPTORS_PATH } from '../../platform/tracing/temporal';

export async function bundleWorkflows(out: string): Promise<string> {
  fs.mkdirSync(path.dirname(out), { recursive: true });
  for (const queue of WORKER_QUEUES) {
    const { code } = await bundleWorkflowCode({ workflowsPath: workflowsPathOf(queue), workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_PATH], logger: { log() {}, info() {}, warn() {}, error: console.error, debug() {}, trace() {} } });
    fs.writeFileSync(workflowBundleOf(out, queue), code);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('bundle-workflows.ts')) {
  const out = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  await bundleWorkflows(out);
  console.log(JSON.stringify({ msg: 'workflow bundles written', stem: out, queues: WORKER_QUEUES }));
}
