import { createWalletActivities, type WalletActivityDeps } from './wallet';
import { createMediaActivities, type MediaActivityDeps } from './media';
import { createKnowledgeActivities, type KnowledgeActivityDeps } from './knowledge';
import { createWebhookActivities } from '../capabilities/webhooks/activities';
import type { WorkerQueue } from '../domain/task-queues';
import { createBatchActivities, type BatchActivityDeps } from './batch';

export type ActivityDeps = WalletActivityDeps & MediaActivityDeps & KnowledgeActivityDeps & BatchActivityDeps;

/** All activities of the project (the workflows' proxy types; tests), built from dependencies created once per process. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createWalletActivities(deps),
    ...createMediaActivities(deps),
    ...createKnowledgeActivities(deps),
    ...createWebhookActivities(deps),
    ...createBatchActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

/** The activities a worker of one queue registers: its own workflows' (domain/task-queues.ts), nothing else. */
export function createQueueActivities(queue: WorkerQueue, deps: ActivityDeps): Partial<Activities> {
  switch (queue) {
    case 'media':
      // Media tasks, batches, the link sweeper and wallet audits.
      return { ...createWalletActivities(deps), ...createMediaActivities(deps), ...createBatchActivities(deps) };
    case 'knowledge':
      return createKnowledgeActivities(deps);
    case 'webhooks':
      return createWebhookActivities(deps);
  }
}
