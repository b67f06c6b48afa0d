import type { TaskKind } from './task';

/** How often each family's vendor is polled (ms), and how long a task may run before it expires. */
export const POLL_INTERVAL_MS: Record<TaskKind, number> = {
  image: 2_000,
  video: 5_000,
  music: 5_000,
  speech: 2_000,
  avatar: 15_000,
  voice: 3_000,
  transcript: 2_000,
};

/** Image tasks run at most 280 s (spec 2 section 8); other families end when their vendor says so. */
export const MAX_RUN_MS: Record<TaskKind, number | null> = {
  image: 280_000,
  video: null,
  music: null,
  speech: null,
  avatar: null,
  voice: null,
  transcript: null,
};
