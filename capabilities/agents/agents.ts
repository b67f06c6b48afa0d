import { GatewayError, errors } from '../../domain/errors';
import { knowledgeRedisKeys } from '../knowledge/store';
import { newId } from '../../platform/ids';
import { canAdminister } from '../../domain/people';
import { DEFAULT_AGENT_SETTINGS, effectiveModelId, whitelistAllows, type AgentRecord, type AgentSettingsRecord } from '../../domain/agents';
import type { Catalogue, Model } from '../../domain/catalogue';
import type { MongoConn } from '../../platform/mongo';
import { agentRedisKeys, type AgentModels, type AgentDoc, type AgentSettingsDoc } from './store';
import { type RedisClient } from '../../platform/redis';
import type { AccountService } from '../accounts/accounts';
import { SCOPE_VERSION_KEY, type KnowledgeScope } from '../knowledge/scope';
import type { BaseRef } from '../knowledge/page-store';
import { actorId, forbidden, type Actor, type AgentPermissions } from './actor';
import type { AgentUsage, AgentUsageReport } from './usage';
import { upsertRacing } from '../../platform/upsert';

export interface AgentInput {
  name: string;
  system_prompt: string;
  model_id?: string | null;
  web_search?: boolean;
  drawing?: boolean;
  temperature?: number | null;
  knowledge_bases?: string[];
  published?: boolean;
}

export type AgentPatch = Partial<Omit<AgentInput, 'knowledge_bases'>> & { knowledge_bases?: string[] };

export interface SettingsPatch {
  model_whitelist?: string[] | null;
  default_model?: string | null;
  key_billing?: 'wallet' | 'escrow';
}

export function toAgentRecord(doc: AgentDoc): AgentRecord {
  return {
    id: doc._id, enterprise_id: doc.enterprise_id, name: doc.name, system_prompt: doc.system_prompt, model_id: doc.model_id,
    web_search: doc.web_search, drawing: doc.drawing, temperature: doc.temperature, knowledge_bases: doc.knowledge_bases ?? [],
    published: doc.published, created_by: doc.created_by, deleted: doc.deleted_at !== null,
  };
}

const sameBases = (a: readonly BaseRef[], b: readonly BaseRef[]) =>
  a.length === b.length && a.every((x, i) => x.account_id === b[i].account_id && x.kb_id === b[i].kb_id);


/**
 * Agents of an enterprise and the enterprise's agent settings (model
 * whitelist, default model, key billing). Owners and admins (and the
 * operator) manage; members see published agents. Every change is written to
 * Mongo and then to the Redis record agent calls read, so it applies to the
 * very next call on every instance.
 */
export class AgentService {
  constructor(
    private readonly db: MongoConn,
    private readonly adb: AgentModels,
    private readonly redis: RedisClient,
    private readonly accounts: AccountService,
    private readonly scope: KnowledgeScope,
    private readonly perms: AgentPermissions,
    private readonly catalogue: () => Catalogue,
    private readonly scopeCacheMs = 0,
    /** AGENT_DEFAULT_MODEL: an agent's model when neither it nor its enterprise names one. */
    private readonly platformDefaultModel = '',
  ) {}

  /**
   * Agent keys are bound by the enterprise whitelist: issuing or approving a key for an agent whose model
   * (its own, the enterprise default, the platform default) is outside it is refused with 403, as every
   * call with that key would be.
   */
  async assertKeyable(agent: Pick<AgentDoc, '_id' | 'enterprise_id' | 'model_id'>): Promise<void> {
    const settings = await this.settingsOf(agent.enterprise_id);
    const id = effectiveModelId(agent, settings, this.platformDefaultModel);
    const model = id ? this.catalogue().resolve(id) : undefined;
    if (model && !whitelistAllows(settings.model_whitelist, model)) {
      throw forbidden(`the model '${model.id}' of agent ${agent._id} is outside the enterprise's model whitelist: a key to it could not call`);
    }
  }

  // ---- enterprise settings

  async settings(actor: Actor, enterpriseId: string): Promise<AgentSettingsRecord> {
    await this.enterprise(enterpriseId);
    await this.perms.roleOf(actor, enterpriseId);
    return this.settingsOf(enterpriseId);
  }

  async updateSettings(actor: Actor, enterpriseId: string, patch: SettingsPatch): Promise<AgentSettingsRecord> {
    await this.enterprise(enterpriseId);
    await this.perms.requireAdmin(actor, enterpriseId);
    const current = await this.settingsOf(enterpriseId);
    const next: AgentSettingsRecord = {
      ...current,
      ...(patch.model_whitelist !== undefined ? { model_whitelist: patch.model_whitelist === null ? null : patch.model_whitelist.map((id) => this.chatModel(id, 'model_whitelist').id) } : {}),
      ...(patch.default_model !== undefined ? { default_model: patch.default_model === null ? null : this.chatModel(patch.default_model, 'default_model').id } : {}),
      ...(patch.key_billing !== undefined ? { key_billing: patch.key_billing } : {}),
    };
    if (next.default_model) this.checkWhitelist(next, this.chatModel(next.default_model, 'default_model'), 'default_model');
    const doc: AgentSettingsDoc = { _id: enterpriseId, model_whitelist: next.model_whitelist, default_model: next.default_model, key_billing: next.key_billing, updated_at: new Date() };
    await upsertRacing(() => this.adb.AgentSettings.replaceOne({ _id: enterpriseId }, doc, { upsert: true }));
    await this.redis.set(agentRedisKeys.settings(enterpriseId), JSON.stringify(next));
    return next;
  }

  /** The settings record (defaults when never set); no permission check: for the services. */
  async settingsOf(enterpriseId: string): Promise<AgentSettingsRecord> {
    const cached = await this.redis.get(agentRedisKeys.settings(enterpriseId));
    if (cached) return JSON.parse(cached) as AgentSettingsRecord;
    return this.publishSettings(enterpriseId);
  }

  private async publishSettings(enterpriseId: string): Promise<AgentSettingsRecord> {
    const doc = await this.adb.AgentSettings.findById(enterpriseId).lean<AgentSettingsDoc>();
    const record: AgentSettingsRecord = doc
      ? { enterprise_id: enterpriseId, model_whitelist: doc.model_whitelist ?? null, default_model: doc.default_model ?? null, key_billing: doc.key_billing ?? 'wallet' }
      : DEFAULT_AGENT_SETTINGS(enterpriseId);
    await this.redis.set(agentRedisKeys.settings(enterpriseId), JSON.stringify(record));
    return record;
  }

  // ---- agents

  async create(actor: Actor, enterpriseId: string, input: AgentInput): Promise<AgentRecord> {
    await this.enterprise(enterpriseId);
    await this.perms.requireAdmin(actor, enterpriseId);
    const createdBy = actorId(actor);
    const now = new Date();
    const doc: AgentDoc = {
      _id: newId('agent'),
      enterprise_id: enterpriseId,
      name: input.name,
      system_prompt: input.system_prompt,
      model_id: null,
      web_search: input.web_search ?? false,
      drawing: input.drawing ?? false,
      temperature: input.temperature ?? null,
      knowledge_bases: [],
      published: input.published ?? false,
      created_by: createdBy,
      deleted_at: null,
      created_at: now,
      updated_at: now,
    };
    if (input.model_id) doc.model_id = await this.checkedModel(enterpriseId, input.model_id);
    if (input.knowledge_bases) doc.knowledge_bases = await this.resolveBases(doc, input.knowledge_bases);
    await this.adb.Agent.create(doc);
    return this.publish(doc);
  }

  async get(actor: Actor, agentId: string): Promise<AgentRecord> {
    const doc = await this.doc(agentId);
    const role = await this.perms.roleOf(actor, doc.enterprise_id);
    if (!canAdminister(role) && !doc.published) throw errors.notFound(`no agent ${agentId}`);
    return toAgentRecord(doc);
  }

  /** Admins see every agent; members see the published ones. */
  async list(actor: Actor, enterpriseId: string): Promise<AgentRecord[]> {
    await this.enterprise(enterpriseId);
    const role = await this.perms.roleOf(actor, enterpriseId);
    const filter: Record<string, unknown> = { enterprise_id: enterpriseId, deleted_at: null };
    if (!canAdminister(role)) filter.published = true;
    const docs = await this.adb.Agent.find(filter).sort({ created_at: 1, _id: 1 }).lean<AgentDoc[]>();
    return docs.map(toAgentRecord);
  }

  async update(actor: Actor, agentId: string, patch: AgentPatch): Promise<AgentRecord> {
    const doc = await this.managed(actor, agentId);
    const next: AgentDoc = { ...doc, updated_at: new Date() };
    if (patch.name !== undefined) next.name = patch.name;
    if (patch.system_prompt !== undefined) next.system_prompt = patch.system_prompt;
    if (patch.web_search !== undefined) next.web_search = patch.web_search;
    if (patch.drawing !== undefined) next.drawing = patch.drawing;
    if (patch.temperature !== undefined) next.temperature = patch.temperature;
    if (patch.published !== undefined) next.published = patch.published;
    if (patch.model_id !== undefined) next.model_id = patch.model_id === null ? null : await this.checkedModel(doc.enterprise_id, patch.model_id);
    if (patch.knowledge_bases !== undefined) next.knowledge_bases = await this.resolveBases(doc, patch.knowledge_bases);
    await this.adb.Agent.replaceOne({ _id: agentId }, next);
    return this.publish(next);
  }

  async setPublished(actor: Actor, agentId: string, published: boolean): Promise<AgentRecord> {
    return this.update(actor, agentId, { published });
  }

  /** Deleting is final: calls with the agent's keys get 403 from the next request on. */
  async remove(actor: Actor, agentId: string): Promise<AgentRecord> {
    const doc = await this.managed(actor, agentId);
    const next: AgentDoc = { ...doc, published: false, deleted_at: new Date(), updated_at: new Date() };
    await this.adb.Agent.replaceOne({ _id: agentId }, next);
    return this.publish(next);
  }

  async attachBase(actor: Actor, agentId: string, kbId: string): Promise<AgentRecord> {
    const doc = await this.managed(actor, agentId);
    if (doc.knowledge_bases.some((b) => b.kb_id === kbId)) return toAgentRecord(doc);
    const [ref] = await this.resolveBases(doc, [kbId]);
    const next: AgentDoc = { ...doc, knowledge_bases: [...doc.knowledge_bases, ref], updated_at: new Date() };
    await this.adb.Agent.replaceOne({ _id: agentId }, next);
    return this.publish(next);
  }

  async detachBase(actor: Actor, agentId: string, kbId: string): Promise<AgentRecord> {
    const doc = await this.managed(actor, agentId);
    if (!doc.knowledge_bases.some((b) => b.kb_id === kbId)) throw errors.notFound(`no knowledge base ${kbId} on agent ${agentId}`);
    const next: AgentDoc = { ...doc, knowledge_bases: doc.knowledge_bases.filter((b) => b.kb_id !== kbId), updated_at: new Date() };
    await this.adb.Agent.replaceOne({ _id: agentId }, next);
    return this.publish(next);
  }

  /**
   * The bases an agent's calls may search: those of its enterprise its creator may read, the enterprise's
   * own base among them (capabilities/knowledge/scope.ts `forAgent`; every base when the operator made it). Agent calls pass the scope version read with the agent (`runtime`): a cached
   * scope is reused only while that version is unchanged (every change of membership or readers bumps
   * it, capabilities/knowledge/scope.ts), so such a change reaches the very next call on every instance, and at most
   * `scopeCacheMs` old, so even a change made behind the services' back is seen within that time.
   */
  async readableBy(agent: Pick<AgentRecord, 'created_by' | 'enterprise_id'>, opts: { version?: string } = {}): Promise<BaseRef[]> {
    const id = `${agent.enterprise_id}:${agent.created_by ?? ''}`;
    const now = performance.now();
    if (opts.version !== undefined && this.scopeCacheMs > 0) {
      const hit = this.scopes.get(id);
      if (hit && hit.version === opts.version && now - hit.at < this.scopeCacheMs) return hit.refs;
    }
    const refs = await this.scope.forAgent(agent.enterprise_id, agent.created_by);
    if (this.scopes.size > 10_000) this.scopes.clear();
    if (opts.version !== undefined) this.scopes.set(id, { at: now, version: opts.version, refs });
    return refs;
  }

  private readonly scopes = new Map<string, { at: number; version: string; refs: BaseRef[] }>();

  /**
   * The agent, its enterprise's settings, the knowledge scope version and the versions of its attached
   * bases for one call: one Redis round trip (Mongo on a miss). The bases are those the agent had on its
   * previous call in this process; when the fresh record still lists the same, their versions (read in
   * that same round trip) are returned, else `kbVersions` is undefined and the search reads them.
   */
  async runtime(agentId: string, enterpriseId: string): Promise<{ agent: AgentRecord | null; settings: AgentSettingsRecord; scopeVersion: string; kbVersions?: number[] }> {
    const guess = this.lastBases.get(agentId);
    // GETs, not one MGET: the keys live in different hash slots (a Redis Cluster refuses a cross-slot MGET);
    // issued in one tick, auto-pipelining sends them in one round trip per node.
    const [agentJson, settingsJson, scopeVersion, ...versions] = await Promise.all([
      this.redis.get(agentRedisKeys.agent(agentId)), this.redis.get(agentRedisKeys.settings(enterpriseId)), this.redis.get(SCOPE_VERSION_KEY),
      ...(guess ?? []).map((b) => this.redis.get(knowledgeRedisKeys.kbVersion(b.account_id, b.kb_id))),
    ]);
    let agent = agentJson ? (JSON.parse(agentJson) as AgentRecord) : null;
    if (!agent) {
      const doc = await this.adb.Agent.findById(agentId).lean<AgentDoc>();
      agent = doc ? await this.publish(doc) : null;
    }
    const settings = settingsJson ? (JSON.parse(settingsJson) as AgentSettingsRecord) : await this.publishSettings(enterpriseId);
    let kbVersions: number[] | undefined;
    if (agent) {
      const bases = agent.knowledge_bases;
      if (guess && sameBases(guess, bases)) kbVersions = versions.map((v) => Number(v ?? 0));
      else {
        if (this.lastBases.size > 10_000) this.lastBases.clear();
        this.lastBases.set(agentId, bases);
      }
    }
    return { agent, settings, scopeVersion: scopeVersion ?? '0', kbVersions };
  }

  /** Each agent's attached bases as last seen by `runtime` in this process. */
  private readonly lastBases = new Map<string, BaseRef[]>();

  /** The agent document, published or not (services); a deleted one only with `includeDeleted`. */
  async doc(agentId: string, opts: { includeDeleted?: boolean } = {}): Promise<AgentDoc> {
    const doc = await this.adb.Agent.findById(agentId).lean<AgentDoc>();
    if (!doc || (doc.deleted_at && !opts.includeDeleted)) throw errors.notFound(`no agent ${agentId}`);
    return doc;
  }

  /** Per-agent usage for owners and admins (a deleted agent's history stays readable). */
  async usage(actor: Actor, agentId: string, days: number, report: AgentUsageReport): Promise<AgentUsage> {
    const doc = await this.doc(agentId, { includeDeleted: true });
    await this.perms.requireAdmin(actor, doc.enterprise_id);
    return report.byDay(doc._id, days);
  }

  private async managed(actor: Actor, agentId: string): Promise<AgentDoc> {
    const doc = await this.doc(agentId);
    await this.perms.requireAdmin(actor, doc.enterprise_id);
    return doc;
  }

  private async publish(doc: AgentDoc): Promise<AgentRecord> {
    const record = toAgentRecord(doc);
    await this.redis.set(agentRedisKeys.agent(doc._id), JSON.stringify(record));
    return record;
  }

  private async enterprise(enterpriseId: string): Promise<void> {
    const account = await this.accounts.get(enterpriseId);
    if (!account.enterprise) throw new GatewayError('invalid_request', `${enterpriseId} is not an enterprise account: agents belong to enterprises`);
  }

  /** A chat model of the catalogue, by id or alias (400 naming the field otherwise). */
  private chatModel(id: string, field: string): Model {
    const model = this.catalogue().resolve(id);
    if (!model || !model.callable || model.endpoint_type !== 'chat' || (model.channels['chat-completions'] ?? []).length === 0) {
      throw new GatewayError('model_not_found', `'${id}' is not a chat model served on /v1/chat/completions`, { param: field });
    }
    return model;
  }

  private checkWhitelist(settings: AgentSettingsRecord, model: Model, field: string): void {
    if (!whitelistAllows(settings.model_whitelist, model)) {
      throw new GatewayError('model_not_allowed', `model '${model.id}' is not on the enterprise's model whitelist`, { param: field });
    }
  }

  private async checkedModel(enterpriseId: string, id: string): Promise<string> {
    const model = this.chatModel(id, 'model_id');
    this.checkWhitelist(await this.settingsOf(enterpriseId), model, 'model_id');
    return model.id;
  }

  /** Bases by kb_id, each readable by the agent's creator (404 for unreadable and missing alike). */
  private async resolveBases(doc: Pick<AgentDoc, 'created_by' | 'enterprise_id'>, kbIds: string[]): Promise<BaseRef[]> {
    const readable = await this.readableBy(doc);
    const out: BaseRef[] = [];
    for (const kbId of new Set(kbIds)) {
      const ref = await this.scope.resolve(readable, kbId);
      if (!ref) throw errors.notFound(`no knowledge base ${kbId} readable by the agent's creator`);
      out.push(ref);
    }
    return out;
  }
}
