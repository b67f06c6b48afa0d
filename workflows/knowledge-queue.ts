/** Workflow entry of the knowledge worker (`workers/main.ts --queue=knowledge`). */
export { kbBuildWorkflow } from './kb-build';
export { kbSweepWorkflow } from './kb-sweep';
