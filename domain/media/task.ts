/**
 * Async media tasks: one internal state machine, shown to clients in each
 * family's own vocabulary (spec 2 section 3). Workflow-safe: pure.
 */
export const TASK_STATES = ['queued', 'running', 'succeeded', 'failed', 'expired', 'cancelled'] as const;
export type TaskState = (typeof TASK_STATES)[number];
export const FINAL_STATES: ReadonlySet<TaskState> = new Set(['succeeded', 'failed', 'expired', 'cancelled']);

export type TaskKind = 'image' | 'video' | 'music' | 'speech' | 'avatar' | 'voice' | 'transcript';

/** What a family calls each internal state. */
const VOCABULARY: Record<TaskKind, Record<TaskState, string>> = {
  image: { queued: 'queued', running: 'running', succeeded: 'succeeded', failed: 'failed', expired: 'failed', cancelled: 'failed' },
  video: { queued: 'queued', running: 'running', succeeded: 'succeeded', failed: 'failed', expired: 'expired', cancelled: 'cancelled' },
  music: { queued: 'processing', running: 'processing', succeeded: 'succeeded', failed: 'failed', expired: 'expired', cancelled: 'cancelled' },
  speech: { queued: 'pending', running: 'pending', succeeded: 'succeeded', failed: 'failed', expired: 'failed', cancelled: 'failed' },
  avatar: { queued: 'pending', running: 'pending', succeeded: 'ready', failed: 'failed', expired: 'failed', cancelled: 'failed' },
  voice: { queued: 'pending', running: 'pending', succeeded: 'succeeded', failed: 'failed', expired: 'failed', cancelled: 'failed' },
  transcript: { queued: 'pending', running: 'pending', succeeded: 'succeeded', failed: 'failed', expired: 'failed', cancelled: 'failed' },
};

export function publicStatus(kind: TaskKind, state: TaskState): string {
  return VOCABULARY[kind][state];
}

/** Internal states a public status filter selects (`in_flight` = queued + running, `all` = every state). */
export function statesFor(kind: TaskKind, filter: string): TaskState[] {
  if (filter === 'all') return [...TASK_STATES];
  if (filter === 'in_flight') return ['queued', 'running'];
  return TASK_STATES.filter((s) => VOCABULARY[kind][s] === filter);
}

/** How the workflow ended, as reported by the upstream or decided by the workflow. */
export interface TaskOutcome {
  state: Exclude<TaskState, 'queued' | 'running'>;
  /** Units actually produced (images, seconds, songs, characters...); 0 on failure. */
  units: number;
  urls: string[];
  /** Unix ms when hosted links stop working (null: long-lived or the provider's own expiry). */
  expiresAt: number | null;
  /** Provider-specific result fields to show (video metadata, avatar id, transcript text...). */
  extra?: Record<string, unknown>;
  errorCode?: string;
  errorMessage?: string;
}
