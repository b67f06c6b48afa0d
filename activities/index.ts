import { createWalletActivities, type WalletActivityDeps } from './wallet';

export type ActivityDeps = WalletActivityDeps;

/** All activities of the worker, built from dependencies created once per process. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createWalletActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
