import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { MediaActivities } from '../activities/media';

// The activities report liveness every 2 s: a worker killed mid-sweep has its sweep retried elsewhere
// after the heartbeat timeout, not after the 2 minutes its run may take (the chaos run's worker kills
// left tasks a crashed gateway had accepted unstarted for three minutes so).
const { sweepExpiredLinks, resumeOrphanTasks } = proxyActivities<MediaActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
});

/**
 * One per deployment: workflowId `media-link-sweeper:{base task queue}` (workers/worker.ts `linkSweeperId`),
 * started by every media worker; a second start is refused.
 */
export const LINK_SWEEPER_ID = 'media-link-sweeper';
const ROUNDS_PER_RUN = 500;

/**
 * The deployment's housekeeping, every `intervalMs`: start the workflows of
 * tasks a crashed gateway accepted but never started, and mark hosted result
 * links expired once their lifetime (24 h) is over. Continues as new to keep
 * its history short.
 */
export async function linkSweeperWorkflow(input: { intervalMs: number }): Promise<void> {
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    await resumeOrphanTasks({ now: Date.now() });
    await sweepExpiredLinks({ now: Date.now() });
    await sleep(input.intervalMs);
  }
  await continueAsNew<typeof linkSweeperWorkflow>(input);
}
