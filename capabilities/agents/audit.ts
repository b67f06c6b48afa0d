import { newId } from '../../platform/ids';
import type { AgentAuditDoc, AgentModels } from './store';
import { actorId, type Actor, type Origin } from './actor';

export type AuditAction = AgentAuditDoc['action'];

export interface AuditEntry {
  enterpriseId: string;
  agentKeyId: string;
  agentId: string;
  action: AuditAction;
  actor: Actor;
  origin: Origin;
  detail?: Record<string, unknown>;
}

/**
 * The append-only audit record of agent keys (spec 3 section 3): who, when,
 * which key, from where, for every request, issue, approval, rejection,
 * revocation and plaintext view. This class can insert and list; nothing in
 * the code base updates or deletes these rows.
 */
export class AgentAudit {
  constructor(private readonly adb: AgentModels) {}

  async append(e: AuditEntry): Promise<AgentAuditDoc> {
    const doc: AgentAuditDoc = {
      _id: newId('aud'),
      enterprise_id: e.enterpriseId,
      agent_key_id: e.agentKeyId,
      agent_id: e.agentId,
      action: e.action,
      actor: { kind: e.actor.kind, user_id: actorId(e.actor) },
      ip: e.origin.ip,
      user_agent: e.origin.userAgent,
      detail: e.detail ?? {},
      created_at: new Date(),
    };
    await this.adb.AgentAudit.create(doc);
    return doc;
  }

  /** Newest first; `before` is the `created_at` (ms) cursor of the previous page. */
  async list(enterpriseId: string, opts: { limit: number; before?: number; agentKeyId?: string }): Promise<{ rows: AgentAuditDoc[]; nextCursor: string | null }> {
    const filter: Record<string, unknown> = { enterprise_id: enterpriseId };
    if (opts.agentKeyId) filter.agent_key_id = opts.agentKeyId;
    if (opts.before !== undefined) filter.created_at = { $lt: new Date(opts.before) };
    const rows = await this.adb.AgentAudit.find(filter).sort({ created_at: -1, _id: -1 }).limit(opts.limit + 1).lean<AgentAuditDoc[]>();
    const page = rows.slice(0, opts.limit);
    return { rows: page, nextCursor: rows.length > opts.limit ? String(page[page.length - 1].created_at.getTime()) : null };
  }
}
