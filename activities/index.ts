import { createWalletActivities, type WalletActivityDeps } from './wallet';
import { createMediaActivities, type MediaActivityDeps } from './media';

export type ActivityDeps = WalletActivityDeps & MediaActivityDeps;

/** All activities of the worker, built from dependencies created once per process. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createWalletActivities(deps),
    ...createMediaActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
