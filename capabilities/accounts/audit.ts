import type { Model } from 'mongoose';
import type { MongoConn } from '../../platform/mongo';
import { auditModel, type AuditDoc } from './store';
import { newId } from '../../platform/ids';

/**
 * The append-only audit record of what people do with keys (plaintext views
 * above all). Only inserts: nothing here updates or deletes an entry.
 */
export class AuditLog {
  private readonly model: Model<AuditDoc>;

  constructor(db: MongoConn) {
    this.model = auditModel(db.conn);
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
