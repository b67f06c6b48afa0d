import Router from '@koa/router';
import { z } from 'zod';
import type { PlatformDeps } from '../../capabilities/deps';
import type { AccountsDeps } from '../../capabilities/accounts/deps';
import type { KnowledgeDeps } from '../../capabilities/knowledge/deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { validQuery } from '../middleware/validate';
import { LIMITS } from '../../capabilities/knowledge/reader';
import { publicBaseUrl } from '../../platform/config';

/**
 * The 8 read-only knowledge-base endpoints of spec 3 section 4.1, all GET.
 * Free: authenticated like any key but never billable, so they work at
 * balance 0 and touch no wallet. Every rule lives in capabilities/knowledge/reader.ts.
 */
const PREFIX = '/api/v1/ext/wiki';

/** A query parameter given once; a repeated one uses its first value. */
const single = z.preprocess((v) => (Array.isArray(v) ? v[0] : v), z.string().optional());
const count = (max: number | null) =>
  z.preprocess((v) => (Array.isArray(v) ? v[0] : v === '' ? undefined : v), z.coerce.number().int().min(0).optional())
    .transform((n) => (n === undefined || max === null ? n : Math.min(n, max)));

export const KbQuery = z.object({ kb_id: single });
export const SearchQuery = z.object({
  kb_id: single,
  q: z.preprocess((v) => (Array.isArray(v) ? v[0] : v), z.string({ error: 'q is required' }).trim().min(1, 'q is required')),
  limit: count(LIMITS.searchMax).refine((n) => n === undefined || n >= 1, 'limit must be at least 1'),
  offset: count(null),
});
export const ListQuery = z.object({
  kb_id: single,
  limit: count(LIMITS.tagPageMax).refine((n) => n === undefined || n >= 1, 'limit must be at least 1'),
  offset: count(null),
});

export function wikiRoutes(deps: PlatformDeps & AccountsDeps & KnowledgeDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: PREFIX });
  const reader = deps.knowledge;
  router.use(authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true }), rateLimit());

  const accountOf = (ctx: Ctx) => ctx.state.auth!.account.id;
  const baseOf = async (ctx: Ctx, kbId: string | undefined) => [await reader.base(accountOf(ctx), kbId)];

  router.get('/search', async (ctx) => {
    const q = validQuery(ctx, SearchQuery);
    const scope = await baseOf(ctx, q.kb_id);
    ctx.body = await reader.search(scope, q.q, q.limit ?? LIMITS.restSearchDefault, q.offset ?? 0);
  });

  router.get('/kbs', async (ctx) => {
    const data = await reader.bases(await reader.scopeOfAccount(accountOf(ctx)));
    ctx.body = { object: 'list', data };
  });

  router.get('/tags', async (ctx) => {
    const q = validQuery(ctx, KbQuery);
    const scope = await baseOf(ctx, q.kb_id);
    ctx.body = { object: 'list', kb_id: scope[0].kb_id, data: await reader.tags(scope) };
  });

  router.get('/tags/:tag', async (ctx) => {
    const q = validQuery(ctx, ListQuery);
    const scope = await baseOf(ctx, q.kb_id);
    const page = await reader.pagesByTag(scope, ctx.params.tag, q.limit ?? LIMITS.tagPageDefault, q.offset ?? 0);
    ctx.body = {
      object: 'list', kb_id: scope[0].kb_id, tag: ctx.params.tag,
      total: page.total, offset: page.offset, returned: page.items.length, has_more: page.has_more, data: page.items,
    };
  });

  router.get('/pages', async (ctx) => {
    const q = validQuery(ctx, KbQuery);
    const raw = ctx.query.ids;
    const ids = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).flatMap((s) => s.split(','));
    const scope = await baseOf(ctx, q.kb_id);
    const { pages, missing } = await reader.pages(scope, ids, LIMITS.restBatchBody);
    ctx.body = { object: 'list', kb_id: scope[0].kb_id, data: pages, missing };
  });

  router.get('/pages/:id', async (ctx) => {
    const q = validQuery(ctx, KbQuery);
    const { body_truncated: _full, ...page } = await reader.page(await baseOf(ctx, q.kb_id), ctx.params.id);
    ctx.body = page;
  });

  router.get('/pages/:id/backlinks', async (ctx) => {
    const q = validQuery(ctx, KbQuery);
    const scope = await baseOf(ctx, q.kb_id);
    const data = await reader.backlinks(scope, ctx.params.id);
    ctx.body = { object: 'list', kb_id: scope[0].kb_id, id: ctx.params.id, data };
  });

  router.get('/pages/:id/source', async (ctx) => {
    const q = validQuery(ctx, KbQuery);
    ctx.body = await reader.source(await baseOf(ctx, q.kb_id), ctx.params.id, publicBaseUrl(deps.config));
  });

  return router;
}
