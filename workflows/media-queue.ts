/** Workflow entry of the media worker (`workers/main.ts --queue=media`): domain/task-queues.ts says which workflows are its. */
export { mediaTaskWorkflow } from './media-task';
export { linkSweeperWorkflow } from './link-sweeper';
export { auditWalletWorkflow } from './audit-wallet';
export { benchNoopWorkflow } from './bench';
export { batchWorkflow } from './batch';
