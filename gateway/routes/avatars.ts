import Router from '@koa/router';
import { capturedSegment } from './captured';
import { errors } from '../../domain/errors';
import { creationQuote } from '../../domain/media/pricing';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { jsonBody } from '../middleware/body';
import { resolveModel } from '../model-access';
import { mediaTaskRoutes } from '../media/task-routes';
import { digitalHumanDialect } from '../media/video-dialect';
import { setTaskCostHeaders } from '../media/cost-headers';
import { AVATAR_PRESETS } from '../../capabilities/media/avatar-presets';
import { parseAvatarRequest } from '../../capabilities/media/avatar-request';
import { AVATAR_ENDPOINT, avatarView, findAvatar, listAvatars, markAvatarDeleted } from '../../capabilities/media/avatar-store';

/** The catalogue model that prices avatar creation (per creation). */
export const AVATAR_CREATE_MODEL = 'dh-avatar-create';
const AVATAR_BODY_LIMIT = 64 * 1024;

/**
 * Avatars (spec 2 sections 2.3, 3, 4.5; docs/media/avatars.md): create
 * (async, charged per creation, pending -> ready or failed with a full
 * refund), get, list (200 newest), delete (400 while pending), presets.
 */
export function avatarRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const avatars = mediaTaskRoutes(deps, router, { kind: 'avatar', label: 'videos avatars', first: [digitalHumanDialect] });
  const { read } = avatars;

  router.post('/v1/videos/avatars', ...avatars.submitChain('videos.avatars', jsonBody(AVATAR_BODY_LIMIT)), async (ctx: Ctx) => {
    const model = resolveModel(deps, ctx, AVATAR_CREATE_MODEL);
    const req = parseAvatarRequest(ctx.state.body);
    avatars.channels(model);
    const input = { name: req.name, source_url: req.source_url, source_kind: req.source_kind };
    ctx.body = avatarView(await avatars.submit(ctx, { endpoint: AVATAR_ENDPOINT, model, input, quote: creationQuote(model) }));
  });

  // Before `/:id`, which would otherwise take `presets` for an id.
  router.get('/v1/videos/avatars/presets', ...read, async (ctx) => {
    ctx.body = { avatars: AVATAR_PRESETS.map(({ id, name }) => ({ id, name })) };
  });

  router.get('/v1/videos/avatars', ...read, async (ctx) => {
    ctx.body = { avatars: (await listAvatars(deps.db, ctx.state.auth!.account.id)).map(avatarView) };
  });

  router.get('/v1/videos/avatars/:id', ...read, async (ctx) => {
    const doc = await findAvatar(deps.db, ctx.state.auth!.account.id, ctx.params.id);
    if (!doc) throw errors.notFound(`no avatar ${ctx.params.id}`);
    // An avatar is a task: its poll answers the hold while it is pending, the final charge once it has ended (issue 26).
    setTaskCostHeaders(ctx, doc);
    ctx.body = avatarView(doc);
  });

  // Any id but `presets` (a regular expression: that path's Allow is GET only, ./captured.ts).
  router.delete('/v1/videos/avatars/:id', /^\/v1\/videos\/avatars\/((?!presets\/?$)[^/]+)\/?$/i, ...read, async (ctx) => {
    const id = capturedSegment(ctx.captures);
    const doc = await findAvatar(deps.db, ctx.state.auth!.account.id, id);
    if (!doc) throw errors.notFound(`no avatar ${id}`);
    if (doc.state === 'queued' || doc.state === 'running') {
      throw errors.invalidRequest(`avatar ${doc._id} is still pending; delete it once it is ready or failed`, 'id');
    }
    await markAvatarDeleted(deps.db, doc._id);
    ctx.body = { id: doc._id, object: 'avatar', deleted: true };
  });
  return router;
}
