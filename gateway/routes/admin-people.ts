import Router from '@koa/router';
import { z } from 'zod';
import { ROLES } from '../../domain/people';
import { toUserRecord } from '../../capabilities/accounts/people';
import type { PlatformDeps } from '../../capabilities/deps';
import type { AccountsDeps } from '../../capabilities/accounts/deps';
import type { GatewayState } from '../context';
import { jsonBody } from '../middleware/body';
import { requireAdmin } from './admin';
import { validBody, validQuery } from '../middleware/validate';
import { IdPaging } from './admin';

/**
 * Operator API for people: users (each with a personal account) and
 * enterprise membership. `Authorization: Bearer <ADMIN_TOKEN>`.
 */
export const NewUser = z
  .object({ email: z.email().max(320), name: z.string().min(1).max(200), password: z.string().min(8).max(200).optional() })
  .strict();
export const UserPatch = z.object({ password: z.string().min(8).max(200).optional(), disabled: z.boolean().optional() }).strict();
export const Member = z.object({ user_id: z.string().min(1).max(100), role: z.enum(ROLES) }).strict();

export function adminPeopleRoutes(deps: PlatformDeps & AccountsDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1' });
  const body = jsonBody(64 * 1024);
  router.use(requireAdmin(deps.config.ADMIN_TOKEN));

  const userView = async (id: string) => {
    const user = toUserRecord(await deps.people.getUser(id));
    return { object: 'user', ...user, memberships: await deps.people.membershipsOf(id) };
  };

  router.post('/users', body, async (ctx) => {
    const input = validBody(ctx, NewUser);
    const doc = await deps.people.createUser(input);
    ctx.status = 201;
    ctx.body = await userView(doc._id);
  });
  router.get('/users', async (ctx) => {
    const { limit, after } = validQuery(ctx, IdPaging);
    const rows = await deps.db.User.find(after ? { _id: { $gt: after } } : {}).sort({ _id: 1 }).limit(limit + 1).select({ _id: 1 }).lean();
    const page = rows.slice(0, limit);
    ctx.body = { object: 'list', data: await Promise.all(page.map((r) => userView(r._id))), next_cursor: rows.length > limit ? page[page.length - 1]._id : null };
  });
  router.get('/users/:id', async (ctx) => {
    ctx.body = await userView(ctx.params.id);
  });
  router.patch('/users/:id', body, async (ctx) => {
    const input = validBody(ctx, UserPatch);
    if (input.password) await deps.people.setPassword(ctx.params.id, input.password);
    if (input.disabled !== undefined) await deps.people.setDisabled(ctx.params.id, input.disabled);
    ctx.body = await userView(ctx.params.id);
  });
  router.get('/accounts/:id/members', async (ctx) => {
    await deps.accounts.get(ctx.params.id);
    ctx.body = { object: 'list', data: await deps.people.membersOf(ctx.params.id) };
  });
  router.put('/accounts/:id/members', body, async (ctx) => {
    const input = validBody(ctx, Member);
    ctx.body = await deps.people.setMember(ctx.params.id, input.user_id, input.role);
  });
  router.delete('/accounts/:id/members/:user', async (ctx) => {
    await deps.people.removeMember(ctx.params.id, ctx.params.user);
    ctx.status = 204;
  });
  return router;
}
