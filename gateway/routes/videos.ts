import Router from '@koa/router';
import { errors } from '../../domain/errors';
import type { GatewayDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { usageCapture } from '../middleware/usage-capture';
import { jsonBody } from '../middleware/body';
import { idempotency } from '../middleware/idempotency';
import { resolveModel } from '../model-access';
import { listTasks, parseListQuery } from '../media/list-query';
import { prepareVideoSubmission, usesDigitalHumanDialect, VIDEO_ENDPOINT } from '../media/video-submission';
import { submittedView, videoView } from '../media/video-view';
import { videoErrorDialect } from '../media/video-dialect';
import { MediaTasks } from '../../services/media-tasks';

/** Video bodies may carry base64 first-frame and reference images. */
export const VIDEOS_BODY_LIMIT = 50 * 1024 * 1024;
/** `status` filter values of the video list (plus `all`, the default). */
const VIDEO_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'expired', 'cancelled'];

/**
 * `POST /v1/videos/generations` (video, digital-human and clip models, all
 * asynchronous), `GET /v1/videos/generations/{id}`, `GET /v1/videos/generations`
 * (spec 2 section 4.4). Docs: docs/media/videos.md.
 */
export function videoRoutes(deps: GatewayDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const tasks = new MediaTasks(deps);
  const readChain = [authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true }), rateLimit()];

  router.post(
    '/v1/videos/generations',
    videoErrorDialect(deps, VIDEOS_BODY_LIMIT),
    usageCapture(deps, 'videos.generations'),
    authenticate(deps, { methods: 'all', billable: true, touchLastUsed: true }),
    rateLimit(),
    jsonBody(VIDEOS_BODY_LIMIT),
    idempotency(deps),
    async (ctx: Ctx) => {
      const body = ctx.state.body as Record<string, unknown>;
      const model = resolveModel(deps, ctx, body.model);
      if (usesDigitalHumanDialect(model)) ctx.state.errorDialect = 'digital-human';
      if (deps.catalogue().channels(model, 'task').length === 0) throw errors.noChannel(model.id, 'videos generations');
      const auth = ctx.state.auth!;
      const { input, quote } = await prepareVideoSubmission(deps.db, auth.account.id, model, body);
      const doc = await tasks.submit({ auth, requestId: ctx.state.requestId, kind: 'video', endpoint: VIDEO_ENDPOINT, model, input, quote });
      ctx.state.usageRecorded = true;
      ctx.body = submittedView(doc);
    },
  );

  router.get('/v1/videos/generations', ...readChain, async (ctx) => {
    const q = parseListQuery(ctx.query, 'video', VIDEO_STATUSES);
    const page = await listTasks(deps.db, ctx.state.auth!.account.id, [VIDEO_ENDPOINT], q);
    ctx.body = { object: 'list', data: page.items.map(videoView), next_cursor: page.nextCursor };
  });

  router.get('/v1/videos/generations/:id', ...readChain, async (ctx) => {
    ctx.body = videoView(await tasks.get(ctx.state.auth!.account.id, ctx.params.id, [VIDEO_ENDPOINT]));
  });
  return router;
}
