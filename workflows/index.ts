/**
 * Every workflow of the project (tests). Each worker queue loads its own entry instead
 * (workflows/{media,knowledge,webhooks}-queue.ts, platform/temporal.ts `workflowsPathOf`). Deterministic code only.
 */
export { auditWalletWorkflow } from './audit-wallet';
export { mediaTaskWorkflow } from './media-task';
export { taskWebhookWorkflow } from './task-webhook';
export { linkSweeperWorkflow } from './link-sweeper';
export { benchNoopWorkflow } from './bench';
export { kbBuildWorkflow } from './kb-build';
export { kbSweepWorkflow } from './kb-sweep';
export { batchWorkflow } from './batch';
