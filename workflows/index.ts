/** Workflow entry for the worker bundle (workflowsPath). Deterministic code only. */
export { auditWalletWorkflow } from './audit-wallet';
export { mediaTaskWorkflow } from './media-task';
export { taskWebhookWorkflow } from './task-webhook';
export { linkSweeperWorkflow } from './link-sweeper';
export { benchNoopWorkflow } from './bench';
export { kbBuildWorkflow } from './kb-build';
export { kbSweepWorkflow } from './kb-sweep';
export { batchWorkflow } from './batch';
