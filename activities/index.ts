import { createWalletActivities, type WalletActivityDeps } from './wallet';
import { createMediaActivities, type MediaActivityDeps } from './media';
import { createKnowledgeActivities, type KnowledgeActivityDeps } from './knowledge';
import { createWebhookActivities } from '../webhooks/activities';
import { createBatchActivities, type BatchActivityDeps } from './batch';

export type ActivityDeps = WalletActivityDeps & MediaActivityDeps & KnowledgeActivityDeps & BatchActivityDeps;

/** All activities of the worker, built from dependencies created once per process. */
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
