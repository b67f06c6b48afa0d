import { Schema, type Connection, type Model } from 'mongoose';
import { docOptions, modelOn } from '../../platform/mongo';
import type { TaskDocument } from '../../domain/media/task';
import type { TaskFileDoc } from '../../providers/media/types';

/**
 * Media tasks (the document's type is the domain's, with its states and
 * kinds) and the large files kept out of them.
 */

const TaskSchema = new Schema<TaskDocument>(
  {
    _id: String, account_id: String, key_id: String, key_name: String, key_prefix: String, kind: String, endpoint: String,
    model: String, state: String, progress: { type: Number, default: null }, input: Schema.Types.Mixed, quote: Schema.Types.Mixed,
    reserved_nano: Number, cost_nano: { type: Number, default: 0 }, unit_count: { type: Number, default: 0 },
    upstream: { type: Schema.Types.Mixed, default: null }, result: { type: Schema.Types.Mixed, default: null },
    final_body: { type: String, default: null }, final_status: { type: Number, default: null },
    error_code: { type: String, default: null }, error_message: { type: String, default: null }, request_id: String,
    callback_url: { type: String, default: undefined }, attempts_log: { type: [Schema.Types.Mixed], default: undefined },
    release_pending: { type: Boolean, default: undefined },
    created_at: Date, started_at: { type: Date, default: null }, completed_at: { type: Date, default: null }, updated_at: Date,
  },
  { ...docOptions, minimize: false },
);
TaskSchema.index({ account_id: 1, endpoint: 1, created_at: -1 });
/** The call log finds a task by its submission's request id (capabilities/calllog/service.ts). */
TaskSchema.index({ request_id: 1 });
/*
 * The deployment's sweeper (workflows/link-sweeper.ts) asks these every minute; without them MongoDB
 * would scan every task ever submitted, three times a minute. Tasks left queued without a workflow
 * (capabilities/media/media-tasks.ts `resumeOrphans`): the queued ones by age. Releases left pending
 * (the field exists only on tasks a gateway closed as not accepted: sparse). Hosted links past their
 * lifetime (activities/media.ts `sweepExpiredLinks`). FerretDB (the embedded store) filters by scan
 * whatever the indexes (platform/mongo.ts); they are for MongoDB. Partial indexes would be smaller, but
 * FerretDB refuses `partialFilterExpression`.
 */
TaskSchema.index({ state: 1, created_at: 1 });
TaskSchema.index({ release_pending: 1 }, { sparse: true });
TaskSchema.index({ 'result.links_expired': 1, 'result.expires_at': 1 });

const TaskFileSchema = new Schema<TaskFileDoc>({ _id: String, group: String, content_type: String, data: Buffer, created_at: Date }, docOptions);
/** The sweeper deletes files past their retention by age (a scan here would read every stored file's bytes). */
TaskFileSchema.index({ created_at: 1 });

export interface MediaModels {
  Task: Model<TaskDocument>;
  TaskFile: Model<TaskFileDoc>;
}

/** The collections on a connection (registered once per connection; capabilities/store.ts opens them at start). */
export function mediaModels(conn: Connection): MediaModels {
  return {
    Task: modelOn(conn, 'Task', TaskSchema, 'tasks'),
    TaskFile: modelOn(conn, 'TaskFile', TaskFileSchema, 'task_files'),
  };
}

/** The media capability's Redis key names. */
export const mediaRedisKeys = {
  /** An async image task still in flight as submitted (capabilities/media/media-tasks.ts): polls answer 202 from it. */
  taskPending: (taskId: string) => `taskpend:${taskId}`,
  /** The vendor's clip templates, cached (gateway/routes/clip-templates.ts): `list:{scene|all}`, `item:{id}`. */
  clipTemplates: (what: string) => `cliptpl:${what}`,
  /**
   * A task's upstream submission (capabilities/media/submission-claim.ts): `c:{holder}` while an attempt
   * calls the vendor (a 10 s lease, renewed), then `a:{json}` (its answer, a day) when it was synchronous.
   */
  taskSubmission: (taskId: string) => `tasksub:${taskId}`,
  /** The outcome a task's first settlement proposed, which every settlement applies (capabilities/media/settlement-decision.ts; a day). */
  taskSettlement: (taskId: string) => `taskset:${taskId}`,
};
