/** Workflow entry of the webhooks worker (`workers/main.ts --queue=webhooks`). */
export { taskWebhookWorkflow } from './task-webhook';
