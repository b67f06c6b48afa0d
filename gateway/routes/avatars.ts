import Router from '@koa/router';
import { errors } from '../../domain/errors';
import { creationQuote } from '../../domain/media/pricing';
import type { GatewayDeps } from '../deps';
import type { Ctx, GatewayState, Middleware } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { usageCapture } from '../middleware/usage-capture';
import { jsonBody } from '../middleware/body';
import { idempotency } from '../middleware/idempotency';
import { resolveModel } from '../model-access';
import { AVATAR_PRESETS } from '../media/avatar-presets';
import { parseAvatarRequest } from '../media/avatar-request';
import { AVATAR_ENDPOINT, avatarView, findAvatar, listAvatars, markAvatarDeleted } from '../media/avatar-store';
import { MediaTasks } from '../../services/media-tasks';

/** The catalogue model that prices avatar creation (per creation). */
export const AVATAR_CREATE_MODEL = 'dh-avatar-create';
const AVATAR_BODY_LIMIT = 64 * 1024;

/** First on every avatar route, so even authentication refusals use the digital-human codes (spec 2 section 7.4). */
const digitalHumanDialect: Middleware = async (ctx, next) => {
  ctx.state.errorDialect = 'digital-human';
  await next();
};

/**
 * Avatars (spec 2 sections 2.3, 3, 4.5; docs/media/avatars.md): create
 * (async, charged per creation, pending -> ready or failed with a full
 * refund), get, list (200 newest), delete (400 while pending), presets.
 */
export function avatarRoutes(deps: GatewayDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const tasks = new MediaTasks(deps);
  const read = [digitalHumanDialect, authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true }), rateLimit()];

  router.post(
    '/v1/videos/avatars',
    digitalHumanDialect,
    usageCapture(deps, 'videos.avatars'),
    authenticate(deps, { methods: 'all', billable: true, touchLastUsed: true }),
    rateLimit(),
    jsonBody(AVATAR_BODY_LIMIT),
    idempotency(deps),
    async (ctx: Ctx) => {
      const model = resolveModel(deps, ctx, AVATAR_CREATE_MODEL);
      const req = parseAvatarRequest(ctx.state.body);
      if (deps.catalogue().channels(model, 'task').length === 0) throw errors.noChannel(model.id, 'videos avatars');
      const doc = await tasks.submit({
        auth: ctx.state.auth!, requestId: ctx.state.requestId, kind: 'avatar', endpoint: AVATAR_ENDPOINT, model,
        input: { name: req.name, source_url: req.source_url, source_kind: req.source_kind }, quote: creationQuote(model),
      });
      ctx.state.usageRecorded = true;
      ctx.body = avatarView(doc);
    },
  );

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
    ctx.body = avatarView(doc);
  });

  router.delete('/v1/videos/avatars/:id', ...read, async (ctx) => {
    const doc = await findAvatar(deps.db, ctx.state.auth!.account.id, ctx.params.id);
    if (!doc) throw errors.notFound(`no avatar ${ctx.params.id}`);
    if (doc.state === 'queued' || doc.state === 'running') {
      throw errors.invalidRequest(`avatar ${doc._id} is still pending; delete it once it is ready or failed`, 'id');
    }
    await markAvatarDeleted(deps.db, doc._id);
    ctx.body = { id: doc._id, object: 'avatar', deleted: true };
  });
  return router;
}
