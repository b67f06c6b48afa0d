import { GatewayError, errors } from '../../domain/errors';
import { AFFINITY_HEADERS, effectiveModelId, whitelistAllows, type AgentRecord } from '../../domain/agents';
import type { Channel, Model } from '../../domain/catalogue';
import { parseRequest } from '../../protocols';
import type { ServiceDeps } from '../deps';
import type { Ctx } from '../context';
import type { ChatCall } from './pipeline';
import { applyBuiltinToolRules, IMAGE_GENERATION_FAMILY } from './builtin-tools';
import { orderByAffinity } from './channel-affinity';
import { contextMessage } from '../../capabilities/agents/context';

type Body = Record<string, any>;
type Message = { role: string; content?: unknown };

/** Client fields an agent call ignores: the agent decides its tools (spec 3 section 4.3 rule 4). */
const CLIENT_TOOL_FIELDS = ['tools', 'tool_choice', 'functions', 'function_call', 'parallel_tool_calls'] as const;

/** The 403 of spec 3 section 7 for the key's agent itself: deleted, of another enterprise, unpublished; null when it serves. */
export function agentStateRefusal(agent: AgentRecord | null, keyAccountId: string): GatewayError | null {
  if (!agent || agent.deleted) return errors.agentForbidden('the agent of this key has been deleted');
  if (agent.enterprise_id !== keyAccountId) return errors.agentForbidden('the agent of this key belongs to another enterprise');
  if (!agent.published) return errors.agentForbidden('the agent of this key is not published');
  return null;
}

/**
 * Why an agent key that may spend nothing more is refused: its agent's 403 when the agent does not serve
 * (that outranks the 402, spec 3 section 7), else null (the 402). Read only for such a key, never on an
 * ordinary key's path (gateway/middleware/auth.ts `spentAgentKey`).
 */
export async function spentAgentKeyRefusal(deps: ServiceDeps, key: { agent_id?: string | null; account_id: string }): Promise<GatewayError | null> {
  const { agent } = await deps.agents.service.runtime(key.agent_id!, key.account_id);
  return agentStateRefusal(agent, key.account_id);
}

/**
 * The prelude of a call made with an agent key (spec 3 section 4.3): it turns
 * the client's chat-completions body into the agent's call, which then runs
 * through the same chat pipeline and billing as any other (the key's account
 * is the enterprise, or the key's escrow). In order:
 * 1. `model` is ignored: the agent's model (its own, the enterprise default,
 *    the platform default), which must be on the enterprise whitelist;
 * 2. the persona is the first system message, ahead of the client's;
 * 3. the latest user message searches the attached bases (within what the
 *    agent's creator may read) and the best pages are injected within a token
 *    budget; their ids go on the usage row;
 * 4. client tools are dropped; built-in web search / drawing are on when the
 *    agent has them and the model (and a streaming call) supports them;
 * 5. the agent's temperature applies when the client sends none;
 * 6. `image_url` parts on a model without vision are 400 model_no_vision;
 * 7. a `session_id` / `conversation_id` header pins one upstream channel.
 */
export async function agentChatCall(deps: ServiceDeps, ctx: Ctx): Promise<ChatCall> {
  const key = ctx.state.auth!.key;
  const agentId = key.agent_id!;
  ctx.state.usageTags = { agent_id: agentId };
  const { agent, settings, scopeVersion, kbVersions } = await deps.agents.service.runtime(agentId, key.account_id);
  const refused = agentStateRefusal(agent, key.account_id);
  if (refused || !agent) throw refused!; // a missing agent is always refused

  // 1. The agent's model, bound by the enterprise whitelist.
  const modelId = effectiveModelId(agent, settings, deps.config.AGENT_DEFAULT_MODEL);
  ctx.state.model = modelId;
  const model = deps.catalogue().resolve(modelId);
  if (!model || !model.callable) throw errors.modelNotFound(modelId);
  ctx.state.model = model.id;
  if (!whitelistAllows(settings.model_whitelist, model)) {
    throw errors.agentForbidden(`the agent's model '${model.id}' is outside the enterprise's model whitelist`);
  }

  const raw = ctx.state.body as Body;
  if (raw.conversation_id !== undefined) {
    throw errors.invalidRequest('conversation_id in the body is not supported: conversations are not stored, send the whole history in messages (a session_id header pins the upstream channel)', 'conversation_id');
  }
  const body = parseRequest('chat-completions', { ...raw, model: model.id }) as Body;
  const clientMessages = body.messages as Message[];

  // 6. Images only for a model with vision.
  if (!model.capabilities.includes('vision') && clientMessages.some(hasImagePart)) {
    throw new GatewayError('model_no_vision', `the agent's model '${model.id}' does not accept images (image_url content parts)`, { param: 'messages' });
  }

  // 3. Single-turn retrieval over the attached bases the creator may still read. The search and the
  // readability check run side by side; an unreadable base discards the search and refuses the call.
  let pageIds: string[] = [];
  let context: string | null = null;
  if (agent.knowledge_bases.length > 0) {
    const question = latestUserText(clientMessages);
    const searching = question && deps.config.AGENT_CONTEXT_TOKENS > 0
      ? deps.retrieval.search(agent.knowledge_bases, question, { limit: deps.config.AGENT_CONTEXT_PAGES, offset: 0, versions: kbVersions, snippets: false })
      : null;
    searching?.catch(() => undefined);
    const readable = await deps.agents.service.readableBy(agent, { version: scopeVersion });
    const lost = agent.knowledge_bases.find((b) => !readable.some((r) => r.account_id === b.account_id && r.kb_id === b.kb_id));
    if (lost) throw errors.agentForbidden(`the agent's knowledge base '${lost.kb_id}' is no longer readable by its creator`);
    const found = await searching;
    const injected = found ? contextMessage(found.hits.map((h) => h.page), deps.config.AGENT_CONTEXT_TOKENS) : null;
    if (injected) {
      context = injected.text;
      pageIds = injected.pageIds;
    }
  }
  ctx.state.usageTags = { agent_id: agentId, kb_page_ids: pageIds };

  // 2. Persona first, then the injected pages, then the client's messages (its system messages included).
  const messages: Message[] = [{ role: 'system', content: agent.system_prompt }];
  if (context) messages.push({ role: 'system', content: context });
  messages.push(...clientMessages);

  // 4. The agent's tools only.
  const stream = body.stream === true;
  const call: Body = { ...body, messages };
  for (const f of CLIENT_TOOL_FIELDS) delete call[f];
  let channels = deps.catalogue().channels(model, 'chat-completions');
  if (channels.length === 0) throw errors.noChannel(model.id, 'chat-completions');
  const builtins = builtinsFor(agent, model, channels, stream);
  if (builtins.size > 0) {
    call.tools = [...builtins].map((type) => ({ type }));
    channels = applyBuiltinToolRules(model, channels, builtins, stream);
  }

  // 5. The agent's temperature when the client gives none.
  if ((call.temperature === undefined || call.temperature === null) && agent.temperature !== null) call.temperature = agent.temperature;

  // The messages (the injected pages are most of the bytes) are serialised once: for the upstream body
  // and for the pre-charge estimate's byte count.
  const messagesJson = JSON.stringify(messages);
  const { messages: _messages, ...rest } = call;
  const restJson = JSON.stringify(rest);
  const upstreamBody = Buffer.from(restJson === '{}' ? `{"messages":${messagesJson}}` : `{"messages":${messagesJson},${restJson.slice(1)}`);
  return {
    client: 'chat-completions',
    model,
    body: call,
    raw: upstreamBody,
    stream,
    includeUsage: body.stream_options?.include_usage === true,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    // The pre-charge gate counts the persona and the injected pages.
    promptForEstimate: messages,
    promptBytes: Buffer.byteLength(messagesJson),
    // 7. Stable channel for a conversation; spread otherwise.
    channels: orderByAffinity(channels, affinityKey(ctx, key.id)),
    builtinToolPath: builtins.size > 0,
  };
}

/** Built-in tools the agent turns on, where the model and the call support them (they need a streaming call). */
function builtinsFor(agent: { web_search: boolean; drawing: boolean }, model: Model, channels: Channel[], stream: boolean): Set<string> {
  const on = new Set<string>();
  if (!stream) return on;
  if (agent.web_search && model.capabilities.includes('web_search') && channels.some((c) => c.web_search)) on.add('web_search');
  if (agent.drawing && model.capabilities.includes('image_gen') && model.family === IMAGE_GENERATION_FAMILY) on.add('image_generation');
  return on;
}

/** The conversation's affinity key from its header, scoped to the key; null spreads the turns. */
function affinityKey(ctx: Ctx, keyId: string): string | null {
  for (const h of AFFINITY_HEADERS) {
    const v = ctx.get(h);
    if (v) return `${keyId}:${v}`;
  }
  return null;
}

function hasImagePart(m: Message): boolean {
  return Array.isArray(m.content) && m.content.some((p) => (p as { type?: unknown })?.type === 'image_url');
}

/** The text of the latest user message (text parts joined). */
export function latestUserText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content.trim();
    if (Array.isArray(m.content)) {
      return m.content
        .filter((p): p is { type: 'text'; text: string } => (p as { type?: unknown })?.type === 'text' && typeof (p as { text?: unknown }).text === 'string')
        .map((p) => p.text)
        .join('\n')
        .trim();
    }
    return '';
  }
  return '';
}
