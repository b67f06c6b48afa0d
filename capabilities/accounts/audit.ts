import { Schema, type Model } from 'mongoose';
import type { MongoConn } from '../../platform/mongo';
import { newId } from '../../platform/ids';

export interface AuditDoc {
  _id: string;
  account_id: string;
  /** `user:<id>`, `operator` or `api`. */
  actor: string;
  /** e.g. `key.reveal`, `key.disable`, `key.delete`, `key.create`. */
  action: string;
  target: string;
  detail: Record<string, unknown> | null;
  created_at: Date;
}

const AuditSchema = new Schema<AuditDoc>(
  { _id: String, account_id: String, actor: String, action: String, target: String, detail: { type: Schema.Types.Mixed, default: null }, created_at: Date },
  { versionKey: false, _id: false },
);
AuditSchema.index({ account_id: 1, created_at: -1 });

/**
 * The append-only audit record of what people do with keys (plaintext views
 * above all). Only inserts: nothing here updates or deletes an entry.
 */
export class AuditLog {
  private readonly model: Model<AuditDoc>;

  constructor(db: MongoConn) {
    this.model = (db.conn.models.Audit as Model<AuditDoc> | undefined) ?? db.conn.model<AuditDoc>('Audit', AuditSchema, 'audit_log');
  }

  async record(entry: Omit<AuditDoc, '_id' | 'created_at' | 'detail'> & { detail?: Record<string, unknown> }): Promise<AuditDoc> {
    const doc: AuditDoc = { _id: newId('audit'), detail: null, ...entry, created_at: new Date() };
    await this.model.create(doc);
    return doc;
  }

  async forTarget(target: string, limit = 50): Promise<AuditDoc[]> {
    return this.model.find({ target }).sort({ created_at: -1 }).limit(limit).lean<AuditDoc[]>();
  }

  async forAccount(accountId: string, limit = 100): Promise<AuditDoc[]> {
    return this.model.find({ account_id: accountId }).sort({ created_at: -1 }).limit(limit).lean<AuditDoc[]>();
  }
}
