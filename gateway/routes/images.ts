import { setHeldHeader, setTaskCostHeaders } from '../media/cost-headers';
import Router from '@koa/router';
import { imageQuote } from '../../domain/media/pricing';
import { publicStatus, FINAL_STATES, type TaskDocument } from '../../domain/media/task';
import { formatCredits } from '../../domain/money';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { mediaTaskRoutes } from '../media/task-routes';
import { parseImagesRequest } from '../../capabilities/media/images-request';
import { imagesBody } from '../media/images-body';
import { dropInlineFiles, storeInlineFiles } from '../../capabilities/media/images-files';
import { answerSync, finalBody } from '../media/images-sync';
import { unix } from '../../capabilities/media/list-query';

/** Images edits bodies may carry reference images: 95 MB (spec 2 section 4.3). */
export const IMAGES_BODY_LIMIT = 95 * 1024 * 1024;
const IMAGE_ENDPOINTS = ['generations', 'edits'];
const IMAGE_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'in_flight'];

/** The async submit / 202 poll body: `{id, status, model, created_at}`. */
function pendingView(doc: TaskDocument) {
  return { id: doc._id, status: publicStatus('image', doc.state), model: doc.model, created_at: unix(doc.created_at) };
}

/** Image task list item (spec 2 section 2.2). */
function listItem(doc: TaskDocument) {
  const item: Record<string, unknown> = {
    id: doc._id, status: publicStatus('image', doc.state), model: doc.model, endpoint: doc.endpoint,
    created_at: unix(doc.created_at), started_at: unix(doc.started_at), completed_at: unix(doc.completed_at),
    unit_count: doc.unit_count, cost: formatCredits(doc.cost_nano), error_code: doc.error_code, request_id: doc.request_id,
  };
  if (doc.state === 'succeeded' && doc.result) {
    item.result = { urls: doc.result.urls, expires_at: doc.result.expires_at ? unix(doc.result.expires_at) : null };
  }
  return item;
}

export function imageRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const images = mediaTaskRoutes(deps, router, { kind: 'image', endpointTypes: ['image'], label: 'images' });
  const { tasks, read: readChain } = images;
  const submitChain = (endpoint: string) => images.submitChain(`images.${endpoint}`, imagesBody(IMAGES_BODY_LIMIT, { multipart: endpoint === 'edits' }));

  const submit = (endpoint: 'generations' | 'edits') => async (ctx: Ctx) => {
    const req = parseImagesRequest(ctx.state.body, { requireImage: endpoint === 'edits' });
    const model = images.model(ctx, req.model, `images ${endpoint}`);
    const { references, async: isAsync, image: _i, image_urls: _u, ...rest } = req;
    // Inline images go to task_files (keyed by the request id): the task document stays small.
    const group = ctx.state.requestId;
    const kept = await storeInlineFiles(deps.db, group, { ...rest, model: model.id, ...(references.length ? { image: references } : {}) });
    const quote = imageQuote(model, { n: req.n, size: req.size, referenceImages: references.length });
    const doc = await images.submit(ctx, { endpoint, model, input: kept.input, quote }).catch(async (err: unknown) => {
      await dropInlineFiles(deps.db, kept.refs);
      throw err;
    });
    if (isAsync) {
      ctx.body = pendingView(doc);
      return;
    }
    await answerSync(deps, tasks, ctx, doc);
  };

  router.post('/v1/images/generations', ...submitChain('generations'), submit('generations'));
  router.post('/v1/images/edits', ...submitChain('edits'), submit('edits'));

  images.list('/v1/images/generations', { endpoints: IMAGE_ENDPOINTS, statuses: IMAGE_STATUSES, view: listItem });

  // 202 while running; any other status is the final answer, byte-identical to the sync call.
  for (const path of ['/v1/images/generations/:id', '/v1/images/edits/:id']) {
    router.get(path, ...readChain, async (ctx) => {
      // Still as submitted: answered from the task's Redis marker, no store read (the usual poll).
      const pending = await tasks.pending(ctx.state.auth!.account.id, ctx.params.id, IMAGE_ENDPOINTS);
      if (pending) {
        if (pending.heldNano !== undefined) setHeldHeader(ctx, { reserved_nano: pending.heldNano });
        ctx.status = 202;
        ctx.body = pending.view;
        return;
      }
      const doc = await tasks.get(ctx.state.auth!.account.id, ctx.params.id, IMAGE_ENDPOINTS);
      if (!FINAL_STATES.has(doc.state)) {
        setTaskCostHeaders(ctx, doc);
        ctx.status = 202;
        ctx.body = pendingView(doc);
        return;
      }
      setTaskCostHeaders(ctx, doc);
      ctx.status = doc.final_status ?? 502;
      ctx.type = 'application/json';
      ctx.body = await finalBody(deps, doc);
    });
  }
  return router;
}
