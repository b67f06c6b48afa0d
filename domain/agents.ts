import type { Model } from './catalogue';

/**
 * Enterprise agents and agent keys: the pure rules (spec 3 sections 2.5, 3,
 * 4.3). No I/O here; capabilities/agents/ holds the services that apply them.
 */

/** What every gateway instance reads per agent call (Redis, truth in Mongo). */
export interface AgentRecord {
  id: string;
  enterprise_id: string;
  name: string;
  system_prompt: string;
  model_id: string | null;
  web_search: boolean;
  drawing: boolean;
  temperature: number | null;
  knowledge_bases: Array<{ account_id: string; kb_id: string }>;
  published: boolean;
  created_by: string | null;
  deleted: boolean;
}

export interface AgentSettingsRecord {
  enterprise_id: string;
  model_whitelist: string[] | null;
  default_model: string | null;
  key_billing: 'wallet' | 'escrow';
}

export const DEFAULT_AGENT_SETTINGS = (enterpriseId: string): AgentSettingsRecord => ({
  enterprise_id: enterpriseId,
  model_whitelist: null,
  default_model: null,
  key_billing: 'wallet',
});

/** The agent's model id: its own, else the enterprise default, else the platform default (spec 3 section 2.5). */
export function effectiveModelId(agent: Pick<AgentRecord, 'model_id'>, settings: Pick<AgentSettingsRecord, 'default_model'>, platformDefault: string): string {
  return agent.model_id ?? settings.default_model ?? platformDefault;
}

/** The enterprise whitelist: null allows every model; a list allows the listed ids or their aliases. */
export function whitelistAllows(whitelist: string[] | null, model: Pick<Model, 'id' | 'aliases'>): boolean {
  if (whitelist === null) return true;
  return whitelist.includes(model.id) || model.aliases.some((a) => whitelist.includes(a));
}

/** Agent-key states and the one transition each action may make (spec 3 section 3). */
export type AgentKeyState = 'requested' | 'issued' | 'rejected' | 'revoked';
export type AgentKeyAction = 'approve' | 'reject' | 'revoke';

const TRANSITIONS: Record<AgentKeyAction, { from: AgentKeyState; to: AgentKeyState }> = {
  approve: { from: 'requested', to: 'issued' },
  reject: { from: 'requested', to: 'rejected' },
  revoke: { from: 'issued', to: 'revoked' },
};

/** The next state, or null when the action does not apply to a key in `state`. */
export function nextState(state: AgentKeyState, action: AgentKeyAction): AgentKeyState | null {
  const t = TRANSITIONS[action];
  return t.from === state ? t.to : null;
}

/** Agent temperature limits, as the chat-completions field (spec 1 section 4.1). */
export const TEMPERATURE_MIN = 0;
export const TEMPERATURE_MAX = 2;

/** Request headers that pin a conversation to one upstream channel (spec 3 section 4.3); hyphenated forms survive proxies that drop underscores. */
export const AFFINITY_HEADERS = ['session_id', 'conversation_id', 'session-id', 'conversation-id'] as const;
