/** Workflow entry for the worker bundle (workflowsPath). Deterministic code only. */
export { auditWalletWorkflow } from './audit-wallet';
export { mediaTaskWorkflow, expireLinksWorkflow } from './media-task';
export { benchNoopWorkflow } from './bench';
