import type { MediaQuote } from './pricing';
import type { CallAttempt } from '../call-attempts';

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

/** A task's outcome as the adapter or the workflow decided it, with the exact client answer of pass-through families. */
export interface ProviderOutcome extends TaskOutcome {
  /** For pass-through families (images): the exact client body and status. */
  clientBody?: string;
  clientStatus?: number;
}

/** The task document (collection `tasks`, platform/mongo.ts): one per async submission, task id = workflow id. */
/** How a synchronous upstream answered, written with the settlement (one write instead of two). */
export interface SyncAnswer {
  channel: string;
  attempts: number;
  /** The ladder's attempts (the call log). */
  attemptsLog: CallAttempt[];
  /** Unix ms when the upstream answered. */
  answeredAt: number;
}

/** A finished submission's result kept for a retried one: a synchronous answer (with how it was reached) or the ladder's failure. */
export interface RecordedSubmission {
  outcome: ProviderOutcome;
  sync?: SyncAnswer;
}

export interface TaskDocument {
  /** Task id = Temporal workflow id. */
  _id: string;
  account_id: string;
  key_id: string;
  key_name: string;
  key_prefix: string;
  kind: TaskKind;
  /** Which public collection lists it (`generations`, `edits`, `videos`, `music`, `speech`, `avatars`, ...). */
  endpoint: string;
  model: string;
  state: TaskState;
  progress: number | null;
  /** The validated request the workflow works from. */
  input: Record<string, unknown>;
  /** Pricing of this task, fixed at submission. */
  quote: MediaQuote;
  reserved_nano: number;
  cost_nano: number;
  unit_count: number;
  upstream: { channel: string; task_id: string | null; attempts: number } | null;
  result: { urls: string[]; expires_at: Date | null; links_expired: boolean; extra: Record<string, unknown> | null } | null;
  /** Final client body for sync-compatible tasks (images), so async polling answers byte-identically. */
  final_body: string | null;
  final_status: number | null;
  error_code: string | null;
  error_message: string | null;
  request_id: string;
  /** Where the final-state webhook goes (docs/webhooks.md); absent or null: none. */
  callback_url?: string | null;
  /** The upstream attempts of the submission (channel, status, latency), at most the ladder's three (docs/call-log.md). */
  attempts_log?: CallAttempt[];
  /**
   * Set on a task that could not be accepted (`not_started`) while its hold may
   * still be on: the orphan sweep releases it and clears the flag
   * (capabilities/media/media-tasks.ts `abandon`).
   */
  release_pending?: boolean;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  updated_at: Date;
}
