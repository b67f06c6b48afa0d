/**
 * Bundle workflows/ once (the worker otherwise does it at every start):
 *   npx tsx scripts/bundle-workflows.ts [out.js]     then WORKFLOW_BUNDLE=out.js
 * Used by the Docker image and by `npm test` (many workers, one bundle).
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';
import { WORKFLOWS_PATH } from '../infra/temporal';
import { WORKFLOW_INTERCEPTORS_PATH } from '../tracing/temporal';

export async function bundleWorkflows(out: string): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_PATH], logger: { log() {}, info() {}, warn() {}, error: console.error, debug() {}, trace() {} } });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('bundle-workflows.ts')) {
  const out = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  await bundleWorkflows(out);
  console.log(JSON.stringify({ msg: 'workflow bundle written', path: out }));
}
