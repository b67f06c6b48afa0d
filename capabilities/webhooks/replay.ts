import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { errors, GatewayError } from '../../domain/errors';
import { FINAL_STATES, type TaskDocument } from '../../domain/media/task';
import type { Config } from '../../platform/config';
import type { MongoConn } from '../../platform/mongo';
import type { MediaModels } from '../media/store';
import type { taskWebhookWorkflow } from '../../workflows/task-webhook';
import { TASK_WEBHOOK_WORKFLOW, taskWebhookWorkflowId } from '../../domain/workflow-ids';
import { taskQueueFor } from '../../domain/task-queues';
import { eventIdOf, webhookModels, type WebhookEventDoc } from './store';

const busy = (taskId: string) =>
  new GatewayError('invalid_request', `a delivery of task ${taskId} is under way; replay it once it has ended`, { status: 409 });

/**
 * Send a task's webhook again (docs/webhooks.md): the same event id and
 * body, freshly signed, retried like the first delivery. Allowed once the
 * previous delivery ended (delivered, failed or refused); one at a time.
 */
export async function replayTaskWebhook(
  deps: { db: MediaModels & MongoConn; temporal: Client; config: Pick<Config, 'TEMPORAL_TASK_QUEUE'> },
  accountId: string,
  taskId: string,
): Promise<{ object: 'webhook_replay'; task_id: string; event_id: string; round: number; status: 'pending' }> {
  const task = await deps.db.Task.findById(taskId).lean<TaskDocument>();
  if (!task || task.account_id !== accountId) throw errors.notFound(`no task ${taskId}`);
  if (!task.callback_url) throw errors.invalidRequest(`task ${taskId} was submitted without a callback_url`, 'id');
  if (!FINAL_STATES.has(task.state)) throw errors.invalidRequest(`task ${taskId} has not ended yet; its webhook goes out when it does`, 'id');
  const m = webhookModels(deps.db.conn);
  const eventId = eventIdOf(taskId);
  const event = await m.Event.findById(eventId).lean<WebhookEventDoc>();
  if (!event || event.state === 'pending') throw busy(taskId);
  const rounds = (await m.Attempt.distinct('round', { event_id: eventId })) as number[];
  const round = Math.max(0, ...rounds.filter((r) => typeof r === 'number')) + 1;
  // Pending before the start: the replay's own outcome, written by its workflow, must come after.
  await m.Event.updateOne({ _id: eventId }, { $set: { state: 'pending', updated_at: new Date() } });
  try {
    await deps.temporal.workflow.start<typeof taskWebhookWorkflow>(TASK_WEBHOOK_WORKFLOW, {
      taskQueue: taskQueueFor(deps.config.TEMPORAL_TASK_QUEUE, 'taskWebhookWorkflow'),
      workflowId: taskWebhookWorkflowId(taskId, round),
      args: [{ taskId, round }],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw busy(taskId);
    await m.Event.updateOne({ _id: eventId }, { $set: { state: event.state, updated_at: new Date() } });
    throw err;
  }
  return { object: 'webhook_replay', task_id: taskId, event_id: eventId, round, status: 'pending' };
}
