import { Schema, type Connection, type Model } from 'mongoose';
import { shardTag } from '../../platform/redis';
import { docOptions, modelOn } from '../../platform/mongo';
import type { BaseRef } from '../knowledge/page-store';

/**
 * Collections of enterprise agents and agent keys (capabilities/agents/). Same rules as
 * platform/mongo.ts: no transactions and no compare-and-set on updates, so every
 * lifecycle step that must happen once is claimed by a unique-index insert
 * (AgentKeyClaim), and the audit is insert-only.
 */

/** An enterprise's agent policy: the model whitelist, the default model and how agent keys are billed. */
export interface AgentSettingsDoc {
  /** The enterprise account id. */
  _id: string;
  /** null: every catalogue chat model; a list: only those (aliases resolve). */
  model_whitelist: string[] | null;
  default_model: string | null;
  /** `wallet`: keys draw on the enterprise balance; `escrow`: a key's cap is held from it at issuance. */
  key_billing: 'wallet' | 'escrow';
  updated_at: Date;
}

export interface AgentDoc {
  _id: string;
  enterprise_id: string;
  name: string;
  /** The persona: the first system message of every call. */
  system_prompt: string;
  /** null: the enterprise default, then the platform default. */
  model_id: string | null;
  web_search: boolean;
  drawing: boolean;
  temperature: number | null;
  /** Attached bases, resolved when attached. */
  knowledge_bases: BaseRef[];
  published: boolean;
  /** The user whose reading rights bound retrieval (null: made by the operator; the enterprise's own bases). */
  created_by: string | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type AgentKeyState = 'requested' | 'issued' | 'rejected' | 'revoked';

export interface AgentKeyDoc {
  _id: string;
  enterprise_id: string;
  agent_id: string;
  name: string;
  state: AgentKeyState;
  /** Who uses the key and sees it in their list (the requester, or whom an admin issued it to). */
  holder_user_id: string | null;
  requested_by: string | null;
  note: string | null;
  spend_cap_nano: number | null;
  billing: 'wallet' | 'escrow';
  /** The ledger account of the key's escrow (`esc_{id}`), when billing is escrow. */
  escrow_wallet_id: string | null;
  /** The ApiKey once issued (deterministic: `key_{suffix of this id}`). */
  api_key_id: string | null;
  prefix: string | null;
  expires_at: Date | null;
  decided_by: string | null;
  decided_at: Date | null;
  reject_reason: string | null;
  revoked_by: string | null;
  revoked_at: Date | null;
  /** The escrow amount returned to the enterprise at revocation. */
  released_nano: number | null;
  deleted_at: Date | null;
  created_at: Date;
}

/** One step of a key's lifecycle that may happen once: the insert is the claim. */
export interface AgentKeyClaimDoc {
  /** `{agent key id}:decide` or `{agent key id}:end`. */
  _id: string;
  outcome: string;
  by: string | null;
  /** What the winner decided (cap, release amount), so a retry resumes with the same values. */
  data: Record<string, unknown>;
  created_at: Date;
}

/** Append-only: rows are inserted and listed, never updated or deleted. */
export interface AgentAuditDoc {
  _id: string;
  enterprise_id: string;
  agent_key_id: string;
  agent_id: string;
  action: 'request' | 'issue' | 'approve' | 'reject' | 'revoke' | 'delete' | 'view_plaintext';
  actor: { kind: 'operator' | 'user'; user_id: string | null };
  ip: string | null;
  user_agent: string | null;
  detail: Record<string, unknown>;
  created_at: Date;
}


const AgentSettingsSchema = new Schema<AgentSettingsDoc>(
  { _id: String, model_whitelist: { type: [String], default: null }, default_model: { type: String, default: null }, key_billing: { type: String, default: 'wallet' }, updated_at: Date },
  docOptions,
);

const AgentSchema = new Schema<AgentDoc>(
  {
    _id: String, enterprise_id: { type: String, index: true }, name: String, system_prompt: String,
    model_id: { type: String, default: null }, web_search: Boolean, drawing: Boolean, temperature: { type: Number, default: null },
    knowledge_bases: { type: Schema.Types.Mixed, default: [] }, published: Boolean, created_by: { type: String, default: null },
    deleted_at: { type: Date, default: null }, created_at: Date, updated_at: Date,
  },
  { ...docOptions, minimize: false },
);

const AgentKeySchema = new Schema<AgentKeyDoc>(
  {
    _id: String, enterprise_id: { type: String, index: true }, agent_id: String, name: String, state: String,
    holder_user_id: { type: String, default: null, index: true }, requested_by: { type: String, default: null },
    note: { type: String, default: null }, spend_cap_nano: { type: Number, default: null }, billing: String,
    escrow_wallet_id: { type: String, default: null }, api_key_id: { type: String, default: null }, prefix: { type: String, default: null },
    expires_at: { type: Date, default: null }, decided_by: { type: String, default: null }, decided_at: { type: Date, default: null },
    reject_reason: { type: String, default: null }, revoked_by: { type: String, default: null }, revoked_at: { type: Date, default: null },
    released_nano: { type: Number, default: null }, deleted_at: { type: Date, default: null }, created_at: Date,
  },
  docOptions,
);

const AgentKeyClaimSchema = new Schema<AgentKeyClaimDoc>(
  { _id: String, outcome: String, by: { type: String, default: null }, data: { type: Schema.Types.Mixed, default: {} }, created_at: Date },
  { ...docOptions, minimize: false },
);

const AgentAuditSchema = new Schema<AgentAuditDoc>(
  {
    _id: String, enterprise_id: String, agent_key_id: String, agent_id: String, action: String, actor: Schema.Types.Mixed,
    ip: { type: String, default: null }, user_agent: { type: String, default: null }, detail: { type: Schema.Types.Mixed, default: {} },
    created_at: Date,
  },
  { ...docOptions, minimize: false },
);
AgentAuditSchema.index({ enterprise_id: 1, created_at: -1 });

export interface AgentModels {
  AgentSettings: Model<AgentSettingsDoc>;
  Agent: Model<AgentDoc>;
  AgentKey: Model<AgentKeyDoc>;
  AgentKeyClaim: Model<AgentKeyClaimDoc>;
  AgentAudit: Model<AgentAuditDoc>;
}

/** The agent collections on a connection (models are registered once per connection). */
export function agentModels(conn: Connection): AgentModels {
  return {
    AgentSettings: modelOn(conn, 'AgentSettings', AgentSettingsSchema, 'agent_settings'),
    Agent: modelOn(conn, 'Agent', AgentSchema, 'agents'),
    AgentKey: modelOn(conn, 'AgentKey', AgentKeySchema, 'agent_keys'),
    AgentKeyClaim: modelOn(conn, 'AgentKeyClaim', AgentKeyClaimSchema, 'agent_key_claims'),
    AgentAudit: modelOn(conn, 'AgentAudit', AgentAuditSchema, 'agent_audit'),
  };
}

/** The agents' Redis key names: the records every gateway reads on each agent call, and the escrow's flights. */
export const agentRedisKeys = {
  agent: (id: string) => `agent:${id}`,
  settings: (enterpriseId: string) => `agentcfg:${enterpriseId}`,
  /** The calls in flight on an agent key's escrow wallet, and its end marker (capabilities/agents/escrow-flights.ts). */
  escrowFlights: (walletId: string) => `${shardTag(walletId)}eflight:${walletId}`,
  escrowEnd: (walletId: string) => `${shardTag(walletId)}eend:${walletId}`,
  /** Held while one decision on an agent key is made (capabilities/agents/agent-keys.ts `oneAtATime`). */
  keyDecisionLock: (agentKeyId: string) => `akeylock:${agentKeyId}`,
};
