import { ActivityFailure, ApplicationFailure, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../capabilities/webhooks/activities';

/** Making and closing the event: quick store writes, retried until they happen. */
const { openTaskWebhook, closeTaskWebhook } = proxyLocalActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});


export interface TaskWebhookResult {
  state: 'delivered' | 'failed' | 'refused' | 'none';
  eventId: string | null;
}

/**
 * The final-state webhook of one task (docs/webhooks.md), started by
 * mediaTaskWorkflow once the task is settled, as an abandoned child so the
 * task's own workflow (and a sync caller waiting on it) ends at once.
 * Delivery is one activity that Temporal retries with exponential backoff
 * (non-2xx, timeout, connection failure) within a 24-hour window: durable
 * across worker crashes, at least once, always with the same event id.
 * A replay (`round` 1, 2, ...: POST /v1/tasks/{id}/deliveries/replay) runs
 * the same delivery again, with the same event id and body.
 */
export async function taskWebhookWorkflow(input: { taskId: string; round?: number }): Promise<TaskWebhookResult> {
  const plan = await openTaskWebhook({ taskId: input.taskId });
  if (!plan) return { state: 'none', eventId: null };
  const { deliverTaskWebhook } = proxyActivities<WebhookActivities>({
    // The attempt's own HTTP timeout, plus resolving, signing and the log writes.
    startToCloseTimeout: plan.attemptTimeoutMs + 10_000,
    scheduleToCloseTimeout: plan.windowMs,
    retry: {
      initialInterval: plan.initialIntervalMs,
      backoffCoefficient: 2,
      maximumInterval: plan.maxIntervalMs,
      nonRetryableErrorTypes: ['CallbackRefused'],
    },
  });
  try {
    await deliverTaskWebhook({ taskId: input.taskId, eventId: plan.eventId, round: input.round ?? 0 });
    return { state: 'delivered', eventId: plan.eventId };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const refused = cause instanceof ApplicationFailure && cause.type === 'CallbackRefused';
    const message = cause instanceof Error ? cause.message : String(cause);
    await closeTaskWebhook({ eventId: plan.eventId, state: refused ? 'refused' : 'failed', error: message });
    return { state: refused ? 'refused' : 'failed', eventId: plan.eventId };
  }
}
