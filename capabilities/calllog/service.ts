import type { Config } from '../../platform/config';
import type { MongoConn } from '../../platform/mongo';
import type { MediaModels } from '../media/store';
import type { UsageModels, UsageDoc } from '../usage/store';
import type { UsageRecorder } from '../usage/usage';
import { FINAL_STATES, publicStatus, type TaskState, type TaskDocument } from '../../domain/media/task';
import type { CallAttempt } from '../../domain/call-attempts';
import { rowView } from '../usage/usage-view';
import { deliveryLog } from '../webhooks/deliveries';

/** Who asks: an API key (its account's calls only) or an operator (any call, plus the Temporal link). */
export type LogReader = { kind: 'account'; accountId: string } | { kind: 'operator' };

export interface CallLogEntry {
  object: 'call_log';
  id: string;
  request_id: string;
  task_id: string | null;
  /** The call's usage row, in the columns of the usage export (spec 2 section 2.5). */
  usage: ReturnType<typeof rowView>;
  /** Upstream attempts: channel, status, latency; never the prompt. */
  attempts: CallAttempt[];
  task: {
    id: string;
    kind: string;
    endpoint: string;
    model: string;
    status: string;
    progress: number | null;
    state_history: Array<{ state: TaskState; status: string; at: string }>;
    webhook: { status: string; event_id: string | null; attempts: number } | null;
  } | null;
  /** Operators only: the task's workflow in the Temporal UI (TEMPORAL_UI_URL). */
  workflow?: { id: string; url: string | null };
}

/**
 * The call-log site's lookup (spec 2 sections 1 and 4.1; docs/call-log.md):
 * one call by its request id (`x-gateway-trace`) or its task id. Everything
 * read is already written by the call itself (its usage row, its task
 * document): the log adds no write to any hot path.
 */
export class CallLog {
  constructor(private readonly deps: { db: MediaModels & UsageModels & MongoConn; usage: UsageRecorder; config: Pick<Config, 'TEMPORAL_UI_URL' | 'TEMPORAL_NAMESPACE'> }) {}

  /**
   * A call's usage row by its request id (`x-gateway-trace`) or task id, among `accountIds` (null: every
   * account, operators), by primary key: a row's id is its request id, or its task id for a task, and a
   * task's submission request id is found through the task (`tasks.request_id` is indexed), so no
   * lookup scans the usage collection. A chat row may still be in the write-ahead journal (drained in
   * batches): then the journal is drained and the row looked up again.
   */
  async row(id: string, accountIds: string[] | null): Promise<UsageDoc | null> {
    const scope = accountIds === null ? {} : { account_id: accountIds.length === 1 ? accountIds[0] : { $in: accountIds } };
    const find = async () => {
      const row = await this.deps.db.Usage.findOne({ _id: id, ...scope }).lean<UsageDoc>();
      if (row) return row;
      const task = await this.deps.db.Task.findOne({ request_id: id, ...scope }, { _id: 1 }).lean<{ _id: string }>();
      return task ? this.deps.db.Usage.findOne({ _id: task._id, ...scope }).lean<UsageDoc>() : null;
    };
    const row = await find();
    if (row) return row;
    await this.deps.usage.flush();
    return find();
  }

  /** The entry, or null when the id is unknown or belongs to another account. */
  async lookup(id: string, reader: LogReader): Promise<CallLogEntry | null> {
    const row = await this.row(id, reader.kind === 'account' ? [reader.accountId] : null);
    if (!row) return null;
    const task = row.task_id ? await this.deps.db.Task.findById(row.task_id).lean<TaskDocument>() : null;
    const entry: CallLogEntry = {
      object: 'call_log',
      id,
      request_id: row.request_id,
      task_id: row.task_id,
      usage: rowView(row),
      attempts: (task?.attempts_log ?? row.attempts ?? []).slice(0, 3),
      task: task ? await this.taskView(task) : null,
    };
    if (reader.kind === 'operator' && row.task_id) entry.workflow = { id: row.task_id, url: this.workflowUrl(row.task_id) };
    return entry;
  }

  private async taskView(task: TaskDocument): Promise<NonNullable<CallLogEntry['task']>> {
    const history: Array<{ state: TaskState; status: string; at: string }> = [{ state: 'queued', status: publicStatus(task.kind, 'queued'), at: task.created_at.toISOString() }];
    if (task.started_at) history.push({ state: 'running', status: publicStatus(task.kind, 'running'), at: task.started_at.toISOString() });
    if (FINAL_STATES.has(task.state) && task.completed_at) {
      history.push({ state: task.state, status: publicStatus(task.kind, task.state), at: task.completed_at.toISOString() });
    }
    const hook = task.callback_url ? await deliveryLog(this.deps.db, task) : null;
    return {
      id: task._id, kind: task.kind, endpoint: task.endpoint, model: task.model, status: publicStatus(task.kind, task.state),
      progress: task.progress, state_history: history,
      webhook: hook ? { status: hook.status, event_id: hook.event?.id ?? null, attempts: hook.data.length } : null,
    };
  }

  private workflowUrl(taskId: string): string | null {
    const ui = this.deps.config.TEMPORAL_UI_URL;
    if (!ui) return null;
    return `${ui.replace(/\/$/, '')}/namespaces/${encodeURIComponent(this.deps.config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(taskId)}`;
  }
}
