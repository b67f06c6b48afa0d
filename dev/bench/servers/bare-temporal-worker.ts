/**
 * Baseline for `bench:media`: Temporal's own worker with nothing of the project's in it: one workflow that
 * returns at once (workflows/bench.ts), the SDK's default options, no interceptors, no activities.
 * Env: TEMPORAL_ADDRESS, TASK_QUEUE.
 */
import { NativeConnection, Worker } from '@temporalio/worker';

const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
const worker = await Worker.create({
  connection,
  taskQueue: process.env.TASK_QUEUE!,
  workflowsPath: new URL('../../../workflows/bench.ts', import.meta.url).pathname,
});
process.on('SIGTERM', () => worker.shutdown());
await worker.run();
await connection.close();
