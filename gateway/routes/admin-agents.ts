import Router from '@koa/router';
import { z } from 'zod';
import { formatCredits, parseCredits, CreditsInput } from '../../domain/money';
import { TEMPERATURE_MAX, TEMPERATURE_MIN, type AgentRecord, type AgentSettingsRecord } from '../../domain/agents';
import type { AgentKeyDoc } from '../../capabilities/agents/store';
import { OPERATOR, type Actor, type Origin } from '../../capabilities/agents/actor';
import { deleteAgent } from '../../capabilities/agents/agent-removal';
import type { PlatformDeps } from '../../capabilities/deps';
import type { AccountsDeps } from '../../capabilities/accounts/deps';
import type { AgentsDeps } from '../../capabilities/agents';
import type { Ctx, GatewayState, Middleware } from '../context';
import { jsonBody } from '../middleware/body';
import { requireAdmin } from './admin';
import { validBody, validQuery } from '../middleware/validate';
import { Instant } from '../../domain/instant';
import { displayName } from '../../domain/display-name';

/**
 * Management API of enterprise agents and agent keys (docs/agents.md).
 * `Authorization: Bearer <ADMIN_TOKEN>`; the call acts as the operator, or on
 * behalf of the user named by `X-Acting-User` (then that user's role in the
 * enterprise decides). Every rule lives in capabilities/agents/; these handlers only parse
 * and render.
 */
const ACTING_USER = 'x-acting-user';

const Credits = CreditsInput;
const Name = displayName(z.string().trim());
const KbIds = z.array(z.string().min(1).max(200)).max(50);
const AgentFields = {
  system_prompt: z.string().max(100_000),
  model_id: z.string().min(1).max(200).nullable().optional(),
  web_search: z.boolean().optional(),
  drawing: z.boolean().optional(),
  temperature: z.number().min(TEMPERATURE_MIN).max(TEMPERATURE_MAX).nullable().optional(),
  knowledge_bases: KbIds.optional(),
  published: z.boolean().optional(),
};
export const NewAgent = z.object({ name: Name, ...AgentFields }).strict();
export const AgentPatch = z.object({ name: Name.optional(), ...AgentFields, system_prompt: AgentFields.system_prompt.optional() }).strict();
export const SettingsPatch = z
  .object({
    model_whitelist: z.array(z.string().min(1).max(200)).max(500).nullable().optional(),
    default_model: z.string().min(1).max(200).nullable().optional(),
    key_billing: z.enum(['wallet', 'escrow']).optional(),
  })
  .strict();
export const KeyRequest = z.object({ name: Name, note: z.string().max(2000).nullable().optional() }).strict();
export const KeyIssue = z
  .object({
    name: Name,
    holder_user_id: z.string().min(1).max(100).nullable().optional(),
    spend_cap_usd: Credits.nullable().optional(),
    expires_at: Instant.nullable().optional(),
  })
  .strict();
export const Approve = z.object({ spend_cap_usd: Credits }).strict();
export const AgentDelete = z.object({ revoke_keys: z.enum(['true', 'false']).optional().transform((v) => v === 'true') });
export const Reject = z.object({ reason: z.string().max(2000).nullable().optional() }).strict();
export const KeyList = z.object({ state: z.enum(['requested', 'issued', 'rejected', 'revoked']).optional(), agent_id: z.string().optional() });
export const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  /** The `next_cursor` of the previous page: milliseconds since the epoch, within the range a date can hold. */
  before: z.coerce.number().int().positive().max(8_640_000_000_000_000, 'must be the next_cursor of the previous page').optional(),
  agent_key_id: z.string().optional(),
});
export const UsageQuery = z.object({ days: z.coerce.number().int().min(1).max(366).default(30) });

function actorOf(ctx: Ctx): Actor {
  const user = ctx.get(ACTING_USER).trim();
  return user ? { kind: 'user', userId: user } : OPERATOR;
}

function originOf(ctx: Ctx): Origin {
  return { ip: ctx.ip || null, userAgent: ctx.get('user-agent') || null };
}

const seconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);
const usd = (nano: number | null) => (nano === null ? null : formatCredits(nano));

function agentView(a: AgentRecord) {
  return {
    id: a.id, object: 'agent', enterprise_id: a.enterprise_id, name: a.name, system_prompt: a.system_prompt, model_id: a.model_id,
    web_search: a.web_search, drawing: a.drawing, temperature: a.temperature, knowledge_bases: a.knowledge_bases.map((b) => b.kb_id),
    published: a.published, created_by: a.created_by,
  };
}

function settingsView(s: AgentSettingsRecord) {
  return { object: 'agent_settings', ...s };
}

export function agentRoutes(deps: PlatformDeps & AccountsDeps & AgentsDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1' });
  const body = jsonBody(256 * 1024);
  const { service, keys, audit, usage } = deps.agents;
  router.use(requireAdmin(deps.config.ADMIN_TOKEN));

  const keyView = async (doc: AgentKeyDoc, extra: Record<string, unknown> = {}) => ({
    id: doc._id, object: 'agent_key', enterprise_id: doc.enterprise_id, agent_id: doc.agent_id, name: doc.name, state: doc.state,
    holder_user_id: doc.holder_user_id, requested_by: doc.requested_by, note: doc.note, prefix: doc.prefix,
    spend_cap_usd: usd(doc.spend_cap_nano), billing: doc.billing,
    used_usd: doc.api_key_id ? formatCredits(await deps.wallet.keySpend(doc.api_key_id)) : '0',
    escrow_balance_usd: usd(await keys.escrowBalance(doc)),
    released_usd: usd(doc.released_nano), expires_at: seconds(doc.expires_at),
    decided_by: doc.decided_by, decided_at: seconds(doc.decided_at), reject_reason: doc.reject_reason,
    revoked_by: doc.revoked_by, revoked_at: seconds(doc.revoked_at), created_at: seconds(doc.created_at),
    ...extra,
  });
  const list = async (docs: AgentKeyDoc[]) => ({ object: 'list', data: await Promise.all(docs.map((d) => keyView(d))) });

  // Enterprise settings: model whitelist, default model, key billing.
  router.get('/accounts/:id/agent-settings', async (ctx) => {
    ctx.body = settingsView(await service.settings(actorOf(ctx), ctx.params.id));
  });
  router.put('/accounts/:id/agent-settings', body, async (ctx) => {
    ctx.body = settingsView(await service.updateSettings(actorOf(ctx), ctx.params.id, validBody(ctx, SettingsPatch)));
  });

  // Agents.
  router.post('/accounts/:id/agents', body, async (ctx) => {
    const agent = await service.create(actorOf(ctx), ctx.params.id, validBody(ctx, NewAgent));
    ctx.status = 201;
    ctx.body = agentView(agent);
  });
  router.get('/accounts/:id/agents', async (ctx) => {
    ctx.body = { object: 'list', data: (await service.list(actorOf(ctx), ctx.params.id)).map(agentView) };
  });
  router.get('/agents/:id', async (ctx) => {
    ctx.body = agentView(await service.get(actorOf(ctx), ctx.params.id));
  });
  router.patch('/agents/:id', body, async (ctx) => {
    ctx.body = agentView(await service.update(actorOf(ctx), ctx.params.id, validBody(ctx, AgentPatch)));
  });
  router.post('/agents/:id/publish', async (ctx) => {
    ctx.body = agentView(await service.setPublished(actorOf(ctx), ctx.params.id, true));
  });
  router.post('/agents/:id/unpublish', async (ctx) => {
    ctx.body = agentView(await service.setPublished(actorOf(ctx), ctx.params.id, false));
  });
  router.delete('/agents/:id', async (ctx) => {
    // `?revoke_keys=true` (the console's way): its issued keys are revoked first, each audited (capabilities/agents/agent-removal.ts);
    // without it the keys stay issued and their calls get 403 (agent deleted, spec 3).
    const { revoke_keys } = validQuery(ctx, AgentDelete);
    if (revoke_keys) {
      const { agent, revoked } = await deleteAgent(deps.agents, actorOf(ctx), ctx.params.id, originOf(ctx));
      ctx.body = { ...agentView(agent), deleted: true, revoked_keys: revoked };
      return;
    }
    ctx.body = { ...agentView(await service.remove(actorOf(ctx), ctx.params.id)), deleted: true };
  });
  router.put('/agents/:id/knowledge-bases/:kb', async (ctx) => {
    ctx.body = agentView(await service.attachBase(actorOf(ctx), ctx.params.id, ctx.params.kb));
  });
  router.delete('/agents/:id/knowledge-bases/:kb', async (ctx) => {
    ctx.body = agentView(await service.detachBase(actorOf(ctx), ctx.params.id, ctx.params.kb));
  });
  router.get('/agents/:id/usage', async (ctx) => {
    const { days } = validQuery(ctx, UsageQuery);
    const report = await service.usage(actorOf(ctx), ctx.params.id, days, usage);
    const money = <T extends { cost_nano: number }>({ cost_nano, ...rest }: T) => ({ ...rest, cost_usd: formatCredits(cost_nano) });
    ctx.body = { object: 'agent_usage', agent_id: report.agent_id, since: report.since, totals: money(report.totals), days: report.days.map(money) };
  });

  // Agent keys: request, issue, approve, reject, revoke, delete, view.
  router.post('/agents/:id/key-requests', body, async (ctx) => {
    const doc = await keys.request(actorOf(ctx), ctx.params.id, validBody(ctx, KeyRequest), originOf(ctx));
    ctx.status = 201;
    ctx.body = await keyView(doc);
  });
  router.post('/agents/:id/keys', body, async (ctx) => {
    const input = validBody(ctx, KeyIssue);
    const { doc, plaintext } = await keys.issue(actorOf(ctx), ctx.params.id, {
      name: input.name, holder_user_id: input.holder_user_id, spend_cap_nano: input.spend_cap_usd, expires_at: input.expires_at ?? null,
    }, originOf(ctx));
    ctx.status = 201;
    ctx.body = await keyView(doc, { key: plaintext });
  });
  router.get('/accounts/:id/agent-keys', async (ctx) => {
    const q = validQuery(ctx, KeyList);
    ctx.body = await list(await keys.listForEnterprise(actorOf(ctx), ctx.params.id, { state: q.state, agentId: q.agent_id }));
  });
  router.get('/users/:id/agent-keys', async (ctx) => {
    ctx.body = await list(await keys.listForUser(actorOf(ctx), ctx.params.id));
  });
  router.get('/agent-keys/:id', async (ctx) => {
    ctx.body = await keyView(await keys.get(actorOf(ctx), ctx.params.id));
  });
  router.get('/agent-keys/:id/plaintext', async (ctx) => {
    const { doc, plaintext } = await keys.viewPlaintext(actorOf(ctx), ctx.params.id, originOf(ctx));
    ctx.set('cache-control', 'no-store');
    ctx.body = await keyView(doc, { key: plaintext });
  });
  // A decision checks the actor's role before it reads the body: a member gets 403, not the body's rules.
  const manager: Middleware = async (ctx, next) => {
    await keys.requireManager(actorOf(ctx), ctx.params.id);
    return next();
  };
  router.post('/agent-keys/:id/approve', manager, body, async (ctx) => {
    const { spend_cap_usd } = validBody(ctx, Approve);
    ctx.body = await keyView(await keys.approve(actorOf(ctx), ctx.params.id, { spend_cap_nano: spend_cap_usd }, originOf(ctx)));
  });
  router.post('/agent-keys/:id/reject', manager, body, async (ctx) => {
    ctx.body = await keyView(await keys.reject(actorOf(ctx), ctx.params.id, validBody(ctx, Reject), originOf(ctx)));
  });
  router.post('/agent-keys/:id/revoke', async (ctx) => {
    ctx.body = await keyView(await keys.revoke(actorOf(ctx), ctx.params.id, originOf(ctx)));
  });
  router.delete('/agent-keys/:id', async (ctx) => {
    ctx.body = { ...(await keyView(await keys.revoke(actorOf(ctx), ctx.params.id, originOf(ctx), { delete: true }))), deleted: true };
  });

  // The append-only audit record.
  router.get('/accounts/:id/agent-keys/audit', async (ctx) => {
    await deps.agents.permissions.requireAdmin(actorOf(ctx), ctx.params.id);
    const q = validQuery(ctx, AuditQuery);
    const { rows, nextCursor } = await audit.list(ctx.params.id, { limit: q.limit, before: q.before, agentKeyId: q.agent_key_id });
    ctx.body = {
      object: 'list',
      data: rows.map((r) => ({
        id: r._id, action: r.action, agent_key_id: r.agent_key_id, agent_id: r.agent_id, actor: r.actor, ip: r.ip,
        user_agent: r.user_agent, detail: r.detail, created_at: Math.floor(r.created_at.getTime() / 1000), // Unix seconds, as every time of these routes (docs/agents.md)
      })),
      next_cursor: nextCursor,
    };
  });
  return router;
}
