import { proxyActivities } from '@temporalio/workflow';
import type { KnowledgeActivities } from '../activities/knowledge';

/**
 * A deleted team base's pages, files and documents are removed
 * (workflowId `kb-sweep:{account}/{kb}`, started by the deletion). The step
 * is idempotent and retried until it succeeds, so a gateway or worker dying
 * mid-sweep leaves nothing behind for long.
 */
const { sweepKbBase } = proxyActivities<KnowledgeActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function kbSweepWorkflow(input: { accountId: string; kbId: string }): Promise<{ pages: number; files: number }> {
  return sweepKbBase(input);
}
