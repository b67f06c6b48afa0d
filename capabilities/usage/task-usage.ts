import type { TaskDocument } from '../../domain/media/task';
import type { UsageRow } from './usage';

/** How a task's usage row ends: what it cost and produced, or why it failed. */
export interface TaskUsageEnd {
  status: 'success' | 'error';
  costNano: number;
  units: number;
  errorCode: string | null;
  errorMessage: string | null;
  completedAt: Date;
  urls: string[];
  expiresAt: Date | null;
}

/**
 * The one usage row of a task (its id is the task id): `in_flight` from
 * submission, replaced once by the final row when the task settles (or could
 * not be started). The hold stays in `reserved_nano` either way.
 */
export function usageRowFromTask(task: TaskDocument, end?: TaskUsageEnd): UsageRow {
  const row: UsageRow = {
    _id: task._id, request_id: task.request_id, task_id: task._id, account_id: task.account_id, key_id: task.key_id,
    key_name: task.key_name, key_prefix: task.key_prefix, endpoint: task.endpoint, model: task.model, status: 'in_flight',
    unit_type: task.quote.unitType, reserved_nano: task.reserved_nano, submitted_at: task.created_at, created_at: task.created_at,
  };
  if (!end) return row;
  return {
    ...row,
    status: end.status, error_code: end.errorCode, error_message: end.errorMessage,
    unit_count: end.units, cost_nano: end.costNano, latency_ms: end.completedAt.getTime() - task.created_at.getTime(),
    attempts_count: task.upstream?.attempts ?? Math.max(1, task.attempts_log?.length ?? 0), result_urls: end.urls, result_expires_at: end.expiresAt,
  };
}
