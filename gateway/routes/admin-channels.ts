import Router from '@koa/router';
import { z } from 'zod';
import { ChannelId, ChannelPatch, NewChannel, type StoredCredentials } from '../../domain/channels';
import type { ChannelEntry } from '../../capabilities/catalogue/channels';
import type { PlatformDeps } from '../../capabilities/deps';
import type { CatalogueDeps } from '../../capabilities/catalogue/deps';
import type { GatewayState } from '../context';
import { jsonBody } from '../middleware/body';
import { requireAdmin } from './admin';
import { validBody, validParams } from '../middleware/validate';

/**
 * Management API of channels (docs/channels.md). `Authorization: Bearer
 * <ADMIN_TOKEN>`. Rules live in capabilities/catalogue/channels.ts (validation, sealing,
 * propagation), capabilities/catalogue/channel-health.ts (breakers) and
 * capabilities/catalogue/channel-test.ts (the test call); these handlers parse and render.
 */
export const Params = z.object({ id: ChannelId });
export const TestBody = z.object({ model: z.string().min(1).max(200).optional() }).strict();

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function channelRoutes(deps: PlatformDeps & CatalogueDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1' });
  const body = jsonBody(1024 * 1024);
  router.use(requireAdmin(deps.config.ADMIN_TOKEN));

  /** Never the secret: its type and last four characters. */
  const credentialsView = (c: StoredCredentials) => {
    if (c.type === 'env') return { type: 'env', env: c.env, configured: deps.channels.envConfigured(c.env) };
    if (c.type === 'secret') return { type: 'secret', hint: `…${c.hint}` };
    return { type: 'none' };
  };
  const view = (e: ChannelEntry, extra: Record<string, unknown> = {}) => {
    const r = e.record;
    return {
      id: r.id, object: 'channel', vendor: r.vendor, adapter: r.adapter, base_url: r.base_url,
      credentials: credentialsView(r.credentials), priority: r.priority, weight: r.weight, protocols: r.protocols,
      capabilities: r.capabilities, models: r.models, enabled: r.enabled, note: r.note, origin: e.origin,
      created_at: seconds(e.created_at), updated_at: seconds(e.updated_at),
      health: deps.channelHealth.state(r.id),
      ...extra,
    };
  };

  router.get('/channels', async (ctx) => {
    ctx.body = { object: 'list', data: (await deps.channels.list()).map((e) => view(e)) };
  });
  router.post('/channels', body, async (ctx) => {
    const entry = await deps.channels.create(validBody(ctx, NewChannel));
    ctx.status = 201;
    ctx.body = view(entry);
  });
  router.get('/channels/:id', async (ctx) => {
    const { id } = validParams(ctx, Params);
    const entry = await deps.channels.get(id);
    // Every gateway's and worker's breaker of this channel, as each last reported it.
    ctx.body = view(entry, { health_by_process: await deps.channelHealth.reported(id) });
  });
  router.patch('/channels/:id', body, async (ctx) => {
    const { id } = validParams(ctx, Params);
    ctx.body = view(await deps.channels.update(id, validBody(ctx, ChannelPatch)));
  });
  router.delete('/channels/:id', async (ctx) => {
    const { id } = validParams(ctx, Params);
    ctx.body = { ...view(await deps.channels.remove(id)), deleted: true };
  });
  // The body (`{"model": ...}`) is optional here.
  const optionalBody: typeof body = async (ctx, next) => (ctx.request.length || ctx.get('transfer-encoding') ? body(ctx, next) : next());
  router.post('/channels/:id/test', optionalBody, async (ctx) => {
    const { id } = validParams(ctx, Params);
    const input = ctx.state.body === undefined ? {} : validBody(ctx, TestBody);
    const entry = await deps.channels.get(id);
    ctx.body = await deps.channelTester.test(entry.record, input.model);
  });
  return router;
}
