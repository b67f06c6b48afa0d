import test from 'ava';
import { usageRowFromTask } from '../../capabilities/usage/task-usage';
import type { TaskDocument } from '../../domain/media/task';

const created = new Date('2026-01-01T00:00:00Z');
const task: TaskDocument = {
  _id: 'task_1', account_id: 'acct_1', key_id: 'key_1', key_name: 'k', key_prefix: 'sk-abcdefgh', kind: 'image', endpoint: 'generations',
  model: 'gpt-image-1', state: 'queued', progress: null, input: {}, quote: { unitType: 'image', unitNano: 40, fixedNano: 0, reservedUnits: 2 },
  reserved_nano: 80, cost_nano: 0, unit_count: 0, upstream: null, result: null, final_body: null, final_status: null, error_code: null,
  error_message: null, request_id: 'req_1', created_at: created, started_at: null, completed_at: null, updated_at: created,
};
const base = {
  _id: 'task_1', request_id: 'req_1', task_id: 'task_1', account_id: 'acct_1', key_id: 'key_1', key_name: 'k', key_prefix: 'sk-abcdefgh',
  endpoint: 'generations', model: 'gpt-image-1', unit_type: 'image', reserved_nano: 80, submitted_at: created, created_at: created,
};

test('a task in flight: its hold, no cost yet', (t) => {
  t.deepEqual(usageRowFromTask(task), { ...base, status: 'in_flight' });
});

test('a settled task: cost, units, latency, attempts and links', (t) => {
  const completedAt = new Date(created.getTime() + 1500);
  const expiresAt = new Date(created.getTime() + 86_400_000);
  const row = usageRowFromTask({ ...task, upstream: { channel: 'c2', task_id: null, attempts: 2 } }, {
    status: 'success', costNano: 40, units: 1, errorCode: null, errorMessage: null, completedAt, urls: ['http://x/1.png'], expiresAt,
  });
  t.deepEqual(row, {
    ...base, status: 'success', error_code: null, error_message: null, unit_count: 1, cost_nano: 40, latency_ms: 1500,
    attempts_count: 2, result_urls: ['http://x/1.png'], result_expires_at: expiresAt,
  });
});

test('a task that could not be started keeps its (refunded) hold and unit type like any failed task', (t) => {
  const completedAt = new Date(created.getTime() + 10);
  const row = usageRowFromTask(task, {
    status: 'error', costNano: 0, units: 0, errorCode: 'not_started', errorMessage: 'the task could not be started', completedAt, urls: [], expiresAt: null,
  });
  t.like(row, { status: 'error', error_code: 'not_started', reserved_nano: 80, unit_type: 'image', cost_nano: 0, attempts_count: 1, latency_ms: 10 });
});
