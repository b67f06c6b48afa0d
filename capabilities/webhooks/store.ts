import { Schema, type Connection, type Model } from 'mongoose';
import type { Sealed } from '../../platform/secrets';
import { docOptions, modelOn } from '../../platform/mongo';

/** An account's webhook signing secret (sealed with KEY_ENCRYPTION_KEY, as stored API keys are). */
export interface SigningKey {
  id: string;
  sealed: Sealed;
  created_at: Date;
}

/** Collection `webhook_secrets`: one per account (`_id` = account id, so creating it twice is a duplicate-key no-op). */
export interface WebhookSecretDoc {
  _id: string;
  current: SigningKey;
  /** The secret before the last rotation, still signing (second signature) until `expires_at`. */
  previous: (SigningKey & { expires_at: Date }) | null;
  updated_at: Date;
}

/** Collection `webhook_reveals`: `_id` = signing key id; inserted once, the first (and only) time the plaintext is shown. */
export interface WebhookRevealDoc {
  _id: string;
  created_at: Date;
}

export type EventState = 'pending' | 'delivered' | 'failed' | 'refused';

/** Collection `webhook_events`: one per task with a callback (`_id` = the event id, derived from the task id). */
export interface WebhookEventDoc {
  _id: string;
  task_id: string;
  account_id: string;
  url: string;
  /** `task.succeeded`, `task.failed`, `task.expired`, `task.cancelled`. */
  type: string;
  /** The poll answer's HTTP status (images pass an upstream status through) and body, frozen when the event is made. */
  poll_status: number;
  /** null when too large to keep here: rendered again from the (final, unchanging) task at each attempt. */
  body: string | null;
  state: EventState;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
  updated_at: Date;
}

export type AttemptOutcome = 'in_progress' | 'delivered' | 'http_error' | 'timeout' | 'connection_error' | 'refused';

/** Collection `webhook_attempts`: `_id` = `{event id}:{attempt}` (Temporal's attempt number). */
export interface WebhookAttemptDoc {
  _id: string;
  event_id: string;
  task_id: string;
  account_id: string;
  /** 0: the delivery when the task ended; 1, 2, ...: replays asked for by the account. */
  round: number;
  /** Temporal's attempt number within the round. */
  attempt: number;
  outcome: AttemptOutcome;
  status_code: number | null;
  error: string | null;
  started_at: Date;
  completed_at: Date | null;
  duration_ms: number | null;
}


const SecretSchema = new Schema<WebhookSecretDoc>(
  { _id: String, current: Schema.Types.Mixed, previous: { type: Schema.Types.Mixed, default: null }, updated_at: Date },
  docOptions,
);
const RevealSchema = new Schema<WebhookRevealDoc>({ _id: String, created_at: Date }, docOptions);
const EventSchema = new Schema<WebhookEventDoc>(
  {
    _id: String, task_id: { type: String, index: true }, account_id: String, url: String, type: String, poll_status: Number,
    body: { type: String, default: null }, state: String, attempts: { type: Number, default: 0 }, last_error: { type: String, default: null },
    created_at: Date, delivered_at: { type: Date, default: null }, updated_at: Date,
  },
  { ...docOptions, minimize: false },
);
const AttemptSchema = new Schema<WebhookAttemptDoc>(
  {
    _id: String, event_id: { type: String, index: true }, task_id: String, account_id: String, round: { type: Number, default: 0 }, attempt: Number, outcome: String,
    status_code: { type: Number, default: null }, error: { type: String, default: null }, started_at: Date,
    completed_at: { type: Date, default: null }, duration_ms: { type: Number, default: null },
  },
  docOptions,
);

export interface WebhookModels {
  Secret: Model<WebhookSecretDoc>;
  Reveal: Model<WebhookRevealDoc>;
  Event: Model<WebhookEventDoc>;
  Attempt: Model<WebhookAttemptDoc>;
}

/** The webhook collections on this connection (models registered once per connection). */
export function webhookModels(conn: Connection): WebhookModels {
  return {
    Secret: modelOn(conn, 'WebhookSecret', SecretSchema, 'webhook_secrets'),
    Reveal: modelOn(conn, 'WebhookReveal', RevealSchema, 'webhook_reveals'),
    Event: modelOn(conn, 'WebhookEvent', EventSchema, 'webhook_events'),
    Attempt: modelOn(conn, 'WebhookAttempt', AttemptSchema, 'webhook_attempts'),
  };
}

/** The event id of a task's final-state webhook: derived from the task id, so every retry and replay carries it. */
export function eventIdOf(taskId: string): string {
  return `evt_${taskId.replace(/^task_/, '')}`;
}
