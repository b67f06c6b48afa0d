import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { AuditResult } from '../activities/wallet';

const { auditWallet } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/** Audit (and optionally repair) one account's wallet projection against its ledger. */
export async function auditWalletWorkflow(input: { accountId: string; repair: boolean }): Promise<AuditResult> {
  return auditWallet({ auditId: workflowInfo().workflowId, accountId: input.accountId, repair: input.repair });
}
