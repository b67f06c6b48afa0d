import Router from '@koa/router';
import { z } from 'zod';
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../domain/errors';
import { formatCredits, parseCredits, CreditsInput } from '../../domain/money';
import type { ApiKeyDoc } from '../../capabilities/accounts/store';
import { safeEqual } from '../../platform/secrets';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState, Middleware } from '../context';
import { jsonBody } from '../middleware/body';
import { idempotencyKeyOf } from '../middleware/idempotency';
import { validBody, validQuery } from '../middleware/validate';
import { Instant } from '../../domain/instant';
import { KEY_PATTERN } from '../../domain/api-key';
import { displayName } from '../../domain/display-name';

/** Operator API standing in for the console. `Authorization: Bearer <ADMIN_TOKEN>`. */

const Credits = CreditsInput;
const Limit = z.number().int().positive().nullable();

export const NewAccount = z.object({ name: z.string().min(1).max(200), enterprise: z.boolean().optional() }).strict();
export const AccountPatch = z
  .object({ status: z.enum(['active', 'inactive']).optional(), rate_limit: z.object({ rpm: Limit.optional(), concurrency: Limit.optional() }).strict().optional() })
  .strict();
export const TopUp = z.object({ amount_usd: Credits, reference: z.string().min(1).max(200).optional() }).strict();
export const Credit = z.object({ amount_usd: Credits, reference: z.string().min(1).max(200) }).strict();
const KeyFields = {
  allowed_models: z.array(z.string().min(1)).nullable().optional(),
  expires_at: Instant.nullable().optional(),
  enabled: z.boolean().optional(),
  spend_cap_usd: Credits.nullable().optional(),
};
export const NewKey = z.object({ name: displayName(), ...KeyFields }).strict();
export const KeyPatch = z.object({ name: displayName().optional(), ...KeyFields }).strict();
/**
 * An early key to import: exactly the shapes authentication accepts (domain/api-key.ts KEY_PATTERN, any 8-character
 * service tag), so an imported key always works; anything else would be stored and refused with 401 forever.
 */
export const LegacyKey = z.object({
  name: displayName(),
  key: z.string().max(512).regex(KEY_PATTERN, 'must be a key authentication accepts: sk-<8 lowercase letters or digits>-<64 lowercase hex characters>'),
  ...KeyFields,
}).strict();
/** Lists in id order (`GET /admin/v1/accounts`, `/users`): `after` is the previous page's `next_cursor`. */
export const IdPaging = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  after: z.string().min(1).max(100).optional(),
});

export const Paging = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  /**
   * The `next_cursor` of the previous page: `<milliseconds>:<last entry id>` (entries of one
   * millisecond are many when a batch settles, so the time alone would skip some); a bare
   * millisecond count (what earlier versions gave) still reads as "before that millisecond".
   */
  before: z.string().regex(/^\d{1,15}(:.{1,300})?$/, 'must be the next_cursor of the previous page').optional(),
});

/** The ledger query after `before` (newest first: time, then id, both descending). */
function ledgerPage(accountId: string, before: string | undefined): Record<string, unknown> {
  if (!before) return { account_id: accountId };
  const cut = before.indexOf(':');
  const at = new Date(Number(cut === -1 ? before : before.slice(0, cut)));
  if (cut === -1) return { account_id: accountId, created_at: { $lt: at } };
  return { account_id: accountId, $or: [{ created_at: { $lt: at } }, { created_at: at, _id: { $lt: before.slice(cut + 1) } }] };
}


function keyView(doc: ApiKeyDoc, extra: Record<string, unknown> = {}) {
  return {
    id: doc._id,
    object: 'api_key',
    account_id: doc.account_id,
    name: doc.name,
    // An agent key's API key record (docs/agents.md): read-only here, managed through /admin/v1/agent-keys/{agent_key_id}.
    kind: doc.agent_id ? 'agent' : doc.kind,
    agent_id: doc.agent_id ?? null,
    agent_key_id: doc.agent_id ? doc._id.replace(/^key_/, 'akey_') : null,
    prefix: doc.prefix,
    tail: doc.tail ?? null,
    revealable: !!doc.secret,
    allowed_models: doc.allowed_models ?? null,
    expires_at: doc.expires_at ? Math.floor(doc.expires_at.getTime() / 1000) : null,
    enabled: doc.enabled,
    deleted: doc.deleted_at !== null,
    spend_cap_usd: doc.spend_cap_nano === null ? null : formatCredits(doc.spend_cap_nano),
    created_at: Math.floor(doc.created_at.getTime() / 1000),
    ...extra,
  };
}

export function requireAdmin(token: string): Middleware {
  return async function adminOnly(ctx: Ctx, next) {
    const m = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
    if (!m || !safeEqual(m[1].trim(), token)) {
      throw new GatewayError('invalid_api_key', 'admin token missing or wrong', { status: 401 });
    }
    await next();
  };
}

export function adminRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1' });
  const body = jsonBody(1024 * 1024);
  router.use(requireAdmin(deps.config.ADMIN_TOKEN));

  const accountView = async (id: string) => {
    const doc = await deps.accounts.get(id);
    const balance = await deps.wallet.balance(id);
    return {
      id: doc._id,
      object: 'account',
      name: doc.name,
      status: doc.status,
      enterprise: doc.enterprise,
      rate_limit: doc.rate_limit,
      balance_usd: formatCredits(balance),
      created_at: Math.floor(doc.created_at.getTime() / 1000),
    };
  };

  router.post('/accounts', body, async (ctx) => {
    const input = validBody(ctx, NewAccount);
    const doc = await deps.accounts.create(input);
    ctx.status = 201;
    ctx.body = await accountView(doc._id);
  });
  router.get('/accounts', async (ctx) => {
    const { limit, after } = validQuery(ctx, IdPaging);
    const rows = await deps.db.Account.find(after ? { _id: { $gt: after } } : {}).sort({ _id: 1 }).limit(limit + 1).select({ _id: 1 }).lean();
    const page = rows.slice(0, limit);
    ctx.body = { object: 'list', data: await Promise.all(page.map((r) => accountView(r._id))), next_cursor: rows.length > limit ? page[page.length - 1]._id : null };
  });
  router.get('/accounts/:id', async (ctx) => {
    ctx.body = await accountView(ctx.params.id);
  });
  router.patch('/accounts/:id', body, async (ctx) => {
    const patch = validBody(ctx, AccountPatch);
    await deps.accounts.update(ctx.params.id, patch);
    ctx.body = await accountView(ctx.params.id);
  });
  router.post('/accounts/:id/topups', body, async (ctx) => {
    const input = validBody(ctx, TopUp);
    const reference = input.reference ?? idempotencyKeyOf(ctx);
    const result = await deps.accounts.operatorCredit(ctx.params.id, input.amount_usd, reference || randomBytes(12).toString('hex'), 'topup');
    ctx.status = 201;
    ctx.body = { object: 'topup', account_id: ctx.params.id, amount_usd: formatCredits(input.amount_usd), replayed: result.status === 'duplicate', balance_usd: formatCredits(result.balanceNano) };
  });
  // Any positive amount, once per reference: a dispute won after its debit, goodwill (docs/payments.md).
  router.post('/accounts/:id/credits', body, async (ctx) => {
    const input = validBody(ctx, Credit);
    const result = await deps.accounts.operatorCredit(ctx.params.id, input.amount_usd, input.reference, 'credit');
    ctx.status = 201;
    ctx.body = { object: 'credit', account_id: ctx.params.id, amount_usd: formatCredits(input.amount_usd), reference: input.reference, replayed: result.status === 'duplicate', balance_usd: formatCredits(result.balanceNano) };
  });
  router.get('/accounts/:id/ledger', async (ctx) => {
    await deps.accounts.get(ctx.params.id);
    const { limit, before } = validQuery(ctx, Paging);
    const rows = await deps.db.Ledger.find(ledgerPage(ctx.params.id, before)).sort({ created_at: -1, _id: -1 }).limit(limit + 1).lean();
    const page = rows.slice(0, limit);
    ctx.body = {
      object: 'list',
      data: page.map((e) => ({
        id: e._id, kind: e.kind, amount_usd: formatCredits(e.amount_nano), key_id: e.key_id, ref: e.ref,
        created_at: e.created_at.toISOString(),
      })),
      next_cursor: rows.length > limit ? `${page[page.length - 1].created_at.getTime()}:${page[page.length - 1]._id}` : null,
    };
  });
  router.get('/accounts/:id/keys', async (ctx) => {
    await deps.accounts.get(ctx.params.id);
    const docs = await deps.keys.listByAccount(ctx.params.id);
    ctx.body = { object: 'list', data: docs.map((d) => keyView(d)) };
  });
  router.post('/accounts/:id/keys', body, async (ctx) => {
    const input = validBody(ctx, NewKey);
    await deps.accounts.get(ctx.params.id);
    const { doc, plaintext } = await deps.keys.create(ctx.params.id, {
      name: input.name, allowed_models: input.allowed_models, expires_at: input.expires_at,
      enabled: input.enabled, spend_cap_nano: input.spend_cap_usd,
    });
    ctx.status = 201;
    ctx.body = keyView(doc, { key: plaintext });
  });
  router.post('/accounts/:id/keys/import-legacy', body, async (ctx) => {
    const input = validBody(ctx, LegacyKey);
    await deps.accounts.get(ctx.params.id);
    const doc = await deps.keys.importLegacy(ctx.params.id, {
      name: input.name, allowed_models: input.allowed_models, expires_at: input.expires_at,
      enabled: input.enabled, spend_cap_nano: input.spend_cap_usd,
    }, input.key);
    ctx.status = 201;
    ctx.body = keyView(doc);
  });
  router.get('/keys/:id', async (ctx) => {
    const doc = await deps.keys.get(ctx.params.id);
    const spend = await deps.wallet.keySpend(doc._id);
    ctx.body = keyView(doc, { used_usd: formatCredits(spend) });
  });
  router.get('/keys/:id/reveal', async (ctx) => {
    const key = await deps.keys.reveal(ctx.params.id);
    deps.log.info('api key revealed', { trace: ctx.state.requestId, key_id: ctx.params.id });
    ctx.body = { id: ctx.params.id, key };
  });
  router.patch('/keys/:id', body, async (ctx) => {
    const input = validBody(ctx, KeyPatch);
    const doc = await deps.keys.update(ctx.params.id, {
      name: input.name, allowed_models: input.allowed_models, expires_at: input.expires_at,
      enabled: input.enabled, spend_cap_nano: input.spend_cap_usd,
    });
    ctx.body = keyView(doc);
  });
  router.delete('/keys/:id', async (ctx) => {
    ctx.body = keyView(await deps.keys.remove(ctx.params.id));
  });
  router.get('/keys/:id/calls', async (ctx) => {
    await deps.keys.get(ctx.params.id);
    const { limit } = validQuery(ctx, Paging);
    await deps.usage.flush();
    const rows = await deps.db.Usage.find({ key_id: ctx.params.id }).sort({ created_at: -1 }).limit(limit).lean();
    ctx.body = {
      object: 'list',
      data: rows.map((r) => ({
        request_id: r.request_id, model: r.model, status: r.status, input_tokens: r.input_tokens,
        output_tokens: r.output_tokens, cached_tokens: r.cached_tokens, cost_usd: formatCredits(r.cost_nano),
        created_at: r.created_at.toISOString(),
      })),
    };
  });
  return router;
}
