import Router from '@koa/router';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { jsonBody } from '../middleware/body';
import { resolveModel } from '../model-access';
import { mediaTaskRoutes } from '../media/task-routes';
import { prepareVideoSubmission, usesDigitalHumanDialect, VIDEO_ENDPOINT } from '../../capabilities/media/video-submission';
import { submittedView, videoView } from '../../capabilities/media/video-view';
import { videoErrorDialect } from '../media/video-dialect';

/** Video bodies may carry base64 first-frame and reference images. */
export const VIDEOS_BODY_LIMIT = 50 * 1024 * 1024;
/** `status` filter values of the video list (plus `all`, the default). */
const VIDEO_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'expired', 'cancelled'];

/**
 * `POST /v1/videos/generations` (video, digital-human and clip models, all
 * asynchronous), `GET /v1/videos/generations/{id}`, `GET /v1/videos/generations`
 * (spec 2 section 4.4). Docs: docs/media/videos.md.
 */
export function videoRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const videos = mediaTaskRoutes(deps, router, { kind: 'video', label: 'videos generations' });

  const submitChain = [videoErrorDialect(deps, VIDEOS_BODY_LIMIT), ...videos.submitChain('videos.generations', jsonBody(VIDEOS_BODY_LIMIT))];
  router.post('/v1/videos/generations', ...submitChain, async (ctx: Ctx) => {
    const body = ctx.state.body as Record<string, unknown>;
    const model = resolveModel(deps, ctx, body.model);
    if (usesDigitalHumanDialect(model)) ctx.state.errorDialect = 'digital-human';
    videos.channels(model);
    // Video, digital-human and clip models; any other model is refused as having no channel here.
    const { input, quote } = await prepareVideoSubmission(deps.db, ctx.state.auth!.account.id, model, body);
    ctx.body = submittedView(await videos.submit(ctx, { endpoint: VIDEO_ENDPOINT, model, input, quote }));
  });
  videos.list('/v1/videos/generations', { endpoints: [VIDEO_ENDPOINT], statuses: VIDEO_STATUSES, view: videoView });
  videos.get('/v1/videos/generations/:id', { endpoints: [VIDEO_ENDPOINT], view: videoView });
  return router;
}
