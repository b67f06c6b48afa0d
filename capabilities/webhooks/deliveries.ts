import { FINAL_STATES, type TaskDocument } from '../../domain/media/task';
import type { MongoConn } from '../../platform/mongo';
import { eventIdOf, webhookModels, type WebhookAttemptDoc, type WebhookEventDoc } from './store';

const unix = (d: Date | null | undefined) => (d ? Math.floor(new Date(d).getTime() / 1000) : null);

/** `none`: no callback; `waiting`: the task is not final yet; then the event's own state. */
export type DeliveryStatus = 'none' | 'waiting' | 'pending' | 'delivered' | 'failed' | 'refused';

export interface DeliveryLog {
  object: 'list';
  task_id: string;
  callback_url: string | null;
  status: DeliveryStatus;
  event: { id: string; type: string; created_at: number | null; delivered_at: number | null; attempts: number; last_error: string | null } | null;
  data: Array<{
    round: number;
    attempt: number;
    event_id: string;
    outcome: string;
    status_code: number | null;
    error: string | null;
    started_at: number | null;
    completed_at: number | null;
    duration_ms: number | null;
  }>;
}

/**
 * The delivery log of one task's webhook (docs/webhooks.md), oldest attempt
 * first. An attempt left `in_progress` while a later one exists was cut
 * short (its worker died): it shows as `interrupted`.
 */
export async function deliveryLog(db: MongoConn, task: TaskDocument & { callback_url?: string | null }): Promise<DeliveryLog> {
  const m = webhookModels(db.conn);
  const base = { object: 'list' as const, task_id: task._id, callback_url: task.callback_url ?? null };
  if (!task.callback_url) return { ...base, status: 'none', event: null, data: [] };
  const eventId = eventIdOf(task._id);
  const [event, attempts] = await Promise.all([
    m.Event.findById(eventId).lean<WebhookEventDoc>(),
    m.Attempt.find({ event_id: eventId }).lean<WebhookAttemptDoc[]>(),
  ]);
  if (!event) return { ...base, status: FINAL_STATES.has(task.state) ? 'pending' : 'waiting', event: null, data: [] };
  attempts.sort((a, b) => new Date(a.started_at).getTime() - new Date(b.started_at).getTime() || a.attempt - b.attempt);
  return {
    ...base,
    status: event.state,
    event: {
      id: event._id, type: event.type, created_at: unix(event.created_at), delivered_at: unix(event.delivered_at),
      attempts: attempts.length, last_error: event.last_error,
    },
    data: attempts.map((a, i) => ({
      round: a.round ?? 0,
      attempt: a.attempt,
      event_id: a.event_id,
      outcome: a.outcome === 'in_progress' && i < attempts.length - 1 ? 'interrupted' : a.outcome,
      status_code: a.status_code,
      error: a.error,
      started_at: unix(a.started_at),
      completed_at: unix(a.completed_at),
      duration_ms: a.duration_ms,
    })),
  };
}
