import { Client } from '@temporalio/client';
import { connectTemporalConnection } from './temporal-connection';
import type { Config } from './config';
import type { WorkerQueue } from '../domain/task-queues';

export async function connectTemporal(config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Promise<Client> {
  const connection = await connectTemporalConnection({ address: config.TEMPORAL_ADDRESS });
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
}

/** The worker bundle entry, resolved relative to this file so it works from any cwd. */
export const WORKFLOWS_PATH = new URL('../workflows/index.ts', import.meta.url).pathname;

/** The workflow entry of one worker queue (workflows/{queue}-queue.ts): a worker registers its own workflows only. */
export function workflowsPathOf(queue: WorkerQueue): string {
  return new URL(`../workflows/${queue}-queue.ts`, import.meta.url).pathname;
}

/**
 * The prebuilt bundle of one worker queue. WORKFLOW_BUNDLE names the bundles' stem
 * (`dist/workflow-bundle.js`); each queue's file has its queue before `.js`
 * (`dist/workflow-bundle.knowledge.js`). dev/scripts/bundle-workflows.ts writes all three.
 */
export function workflowBundleOf(bundle: string, queue: WorkerQueue): string {
  return bundle.endsWith('.js') ? `${bundle.slice(0, -3)}.${queue}.js` : `${bundle}.${queue}.js`;
}
