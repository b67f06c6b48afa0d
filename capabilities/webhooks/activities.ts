import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Config } from '../../platform/config';
import type { MongoConn } from '../../platform/mongo';
import type { MediaModels } from '../media/store';
import type { Logger } from '../../platform/logger';
import { upsertRacing } from '../../platform/upsert';
import { FINAL_STATES, type TaskDocument } from '../../domain/media/task';
import { eventIdOf, webhookModels, type AttemptOutcome, type WebhookEventDoc } from './store';
import { WebhookSecrets } from './secrets';
import { eventTypeOf, taskPollAnswer } from './task-body';
import { CallbackRefused, resolveCallback } from './resolve';
import { postDelivery } from './deliver';
import { signatureHeader } from './signature';

export interface WebhookActivityDeps {
  db: MediaModels & MongoConn;
  config: Config;
  log: Logger;
}

/** How the delivery workflow retries, from the worker's config (docs/webhooks.md). */
export interface WebhookPlan {
  eventId: string;
  attemptTimeoutMs: number;
  initialIntervalMs: number;
  maxIntervalMs: number;
  windowMs: number;
}

/** Bodies up to this size are frozen in the event; larger ones (b64_json images) are rendered again per attempt. */
const MAX_FROZEN_BODY = 512 * 1024;

/** The failure type the workflow does not retry: the callback points where deliveries may not go. */
export const REFUSED = 'CallbackRefused';

/**
 * Task webhooks: make the event once the task is final, then one signed
 * POST per attempt (Temporal retries the attempt with exponential backoff
 * for 24 h), each attempt recorded in the delivery log.
 */
export function createWebhookActivities(deps: WebhookActivityDeps) {
  const m = webhookModels(deps.db.conn);
  const secrets = new WebhookSecrets(deps);
  const loadTask = async (taskId: string) => {
    const task = await deps.db.Task.findById(taskId).lean<TaskDocument & { callback_url?: string | null }>();
    if (!task) throw ApplicationFailure.nonRetryable(`task ${taskId} not found`, 'TaskNotFound');
    return task;
  };

  return {
    /** The task's event (made once, id derived from the task id), or null when the task has no callback. */
    async openTaskWebhook(input: { taskId: string }): Promise<WebhookPlan | null> {
      const task = await loadTask(input.taskId);
      if (!task.callback_url) return null;
      if (!FINAL_STATES.has(task.state)) throw new Error(`task ${task._id} is not final yet (${task.state})`);
      const eventId = eventIdOf(task._id);
      if (!(await m.Event.exists({ _id: eventId }))) {
        const answer = await taskPollAnswer(deps.db, task);
        const now = new Date();
        const doc: WebhookEventDoc = {
          _id: eventId, task_id: task._id, account_id: task.account_id, url: task.callback_url, type: eventTypeOf(task),
          poll_status: answer.status, body: answer.body.length <= MAX_FROZEN_BODY ? answer.body : null, state: 'pending',
          attempts: 0, last_error: null, created_at: now, delivered_at: null, updated_at: now,
        };
        await m.Event.create(doc).catch((err: unknown) => {
          if ((err as { code?: number }).code !== 11000) throw err;
        });
      }
      const c = deps.config;
      return {
        eventId, attemptTimeoutMs: c.WEBHOOK_TIMEOUT_MS, initialIntervalMs: c.WEBHOOK_RETRY_INITIAL_MS,
        maxIntervalMs: c.WEBHOOK_RETRY_MAX_INTERVAL_MS, windowMs: c.WEBHOOK_RETRY_WINDOW_MS,
      };
    },

    /** One delivery attempt. Throws on a non-2xx answer, a timeout or a connection failure (retried), and on a refused target (not retried). */
    async deliverTaskWebhook(input: { taskId: string; eventId: string; round?: number }): Promise<{ status: number }> {
      const attempt = Context.current().info.attempt;
      const round = input.round ?? 0;
      const event = await m.Event.findById(input.eventId).lean<WebhookEventDoc>();
      if (!event) throw ApplicationFailure.nonRetryable(`webhook event ${input.eventId} not found`, 'EventNotFound');
      const attemptId = round === 0 ? `${event._id}:${attempt}` : `${event._id}:r${round}:${attempt}`;
      const startedAt = new Date();
      // Safe under races (an attempt taken over by another worker while the first still runs): platform/upsert.ts.
      await upsertRacing(() => m.Attempt.replaceOne(
        { _id: attemptId },
        {
          _id: attemptId, event_id: event._id, task_id: event.task_id, account_id: event.account_id, round, attempt, outcome: 'in_progress',
          status_code: null, error: null, started_at: startedAt, completed_at: null, duration_ms: null,
        },
        { upsert: true },
      ));
      const finish = async (outcome: AttemptOutcome, statusCode: number | null, error: string | null) => {
        const now = new Date();
        await m.Attempt.updateOne({ _id: attemptId }, { $set: { outcome, status_code: statusCode, error, completed_at: now, duration_ms: now.getTime() - startedAt.getTime() } });
        await m.Event.updateOne({ _id: event._id }, {
          $set: {
            attempts: attempt, last_error: error, updated_at: now,
            ...(outcome === 'delivered' ? { state: 'delivered', delivered_at: now } : outcome === 'refused' ? { state: 'refused' } : {}),
          },
        });
      };

      let target;
      try {
        target = await resolveCallback(event.url, deps.config.DEPLOYMENT_MODE, deps.config.WEBHOOK_DNS_SERVERS);
      } catch (err) {
        if (err instanceof CallbackRefused) {
          await finish('refused', null, err.message);
          deps.log.warn('webhook refused at delivery (SSRF policy)', { event: event._id, task: event.task_id, reason: err.message });
          throw ApplicationFailure.nonRetryable(err.message, REFUSED);
        }
        await finish('connection_error', null, (err as Error).message);
        throw ApplicationFailure.retryable((err as Error).message, 'WebhookDeliveryFailed');
      }
      const body = event.body ?? (await taskPollAnswer(deps.db, await loadTask(event.task_id))).body;
      let keys = await secrets.signingSecrets(event.account_id);
      if (keys.length === 0) {
        await secrets.ensure(event.account_id);
        keys = await secrets.signingSecrets(event.account_id);
      }
      // The timestamp is this attempt's: receivers reject old ones (replay protection); the id stays the event's.
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'model-gateway-webhooks/1',
        'webhook-id': event._id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(keys, event._id, timestamp, body),
        'x-gateway-event-type': event.type,
        'x-gateway-task-id': event.task_id,
        'x-gateway-poll-status': String(event.poll_status),
        'x-gateway-delivery-attempt': String(attempt),
        ...(round > 0 ? { 'x-gateway-delivery-replay': String(round) } : {}),
      };
      const r = await postDelivery(target, headers, body, deps.config.WEBHOOK_TIMEOUT_MS);
      if (r.kind === 'delivered') {
        await finish('delivered', r.status, null);
        return { status: r.status };
      }
      await finish(r.kind, r.kind === 'http_error' ? r.status : null, r.error);
      throw ApplicationFailure.retryable(r.error, 'WebhookDeliveryFailed');
    },

    /** The retries ran out (24 h) or the target was refused: the event ends undelivered. */
    async closeTaskWebhook(input: { eventId: string; state: 'failed' | 'refused'; error: string }): Promise<void> {
      await m.Event.updateOne({ _id: input.eventId }, { $set: { state: input.state, last_error: input.error, updated_at: new Date() } });
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
