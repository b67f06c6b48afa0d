import Router from '@koa/router';
import { errors } from '../../domain/errors';
import { imageQuote } from '../../domain/media/pricing';
import { publicStatus, FINAL_STATES } from '../../domain/media/task';
import { formatCredits } from '../../domain/money';
import type { TaskDoc } from '../../infra/mongo';
import type { GatewayDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { usageCapture } from '../middleware/usage-capture';
import { idempotency } from '../middleware/idempotency';
import { resolveModel } from '../model-access';
import { parseImagesRequest } from '../media/images-request';
import { imagesBody } from '../media/images-body';
import { dropInlineFiles, storeInlineFiles } from '../media/images-files';
import { answerSync, finalBody } from '../media/images-sync';
import { listTasks, parseListQuery, unix } from '../media/list-query';
import { MediaTasks } from '../../services/media-tasks';

/** Images edits bodies may carry reference images: 95 MB (spec 2 section 4.3). */
export const IMAGES_BODY_LIMIT = 95 * 1024 * 1024;
const IMAGE_ENDPOINTS = ['generations', 'edits'];
const IMAGE_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'in_flight'];

/** The async submit / 202 poll body: `{id, status, model, created_at}`. */
function pendingView(doc: TaskDoc) {
  return { id: doc._id, status: publicStatus('image', doc.state), model: doc.model, created_at: unix(doc.created_at) };
}

/** Image task list item (spec 2 section 2.2). */
function listItem(doc: TaskDoc) {
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

export function imageRoutes(deps: GatewayDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const tasks = new MediaTasks(deps);
  const submitChain = (endpoint: string) => [
    usageCapture(deps, `images.${endpoint}`),
    authenticate(deps, { methods: 'all', billable: true, touchLastUsed: true }),
    rateLimit(),
    imagesBody(IMAGES_BODY_LIMIT, { multipart: endpoint === 'edits' }),
    idempotency(deps),
  ];
  const readChain = [authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true }), rateLimit()];

  const submit = (endpoint: 'generations' | 'edits') => async (ctx: Ctx) => {
    const req = parseImagesRequest(ctx.state.body, { requireImage: endpoint === 'edits' });
    const model = resolveModel(deps, ctx, req.model);
    if (model.endpoint_type !== 'image' || deps.catalogue().channels(model, 'task').length === 0) {
      throw errors.noChannel(model.id, `images ${endpoint}`);
    }
    const { references, async: isAsync, image: _i, image_urls: _u, ...rest } = req;
    // Inline images go to task_files (keyed by the request id): the task document stays small.
    const group = ctx.state.requestId;
    const kept = await storeInlineFiles(deps.db, group, { ...rest, model: model.id, ...(references.length ? { image: references } : {}) });
    let doc: TaskDoc;
    try {
      doc = await tasks.submit({
        auth: ctx.state.auth!,
        requestId: ctx.state.requestId,
        kind: 'image',
        endpoint,
        model,
        input: kept.input,
        quote: imageQuote(model, { n: req.n, size: req.size, referenceImages: references.length }),
      });
    } catch (err) {
      await dropInlineFiles(deps.db, kept.refs);
      throw err;
    }
    ctx.state.usageRecorded = true;
    if (isAsync) {
      ctx.body = pendingView(doc);
      return;
    }
    await answerSync(deps, tasks, ctx, doc);
  };

  router.post('/v1/images/generations', ...submitChain('generations'), submit('generations'));
  router.post('/v1/images/edits', ...submitChain('edits'), submit('edits'));

  router.get('/v1/images/generations', ...readChain, async (ctx) => {
    const q = parseListQuery(ctx.query, 'image', IMAGE_STATUSES);
    const page = await listTasks(deps.db, ctx.state.auth!.account.id, IMAGE_ENDPOINTS, q);
    ctx.body = { object: 'list', data: page.items.map(listItem), next_cursor: page.nextCursor };
  });

  // 202 while running; any other status is the final answer, byte-identical to the sync call.
  for (const path of ['/v1/images/generations/:id', '/v1/images/edits/:id']) {
    router.get(path, ...readChain, async (ctx) => {
      const doc = await tasks.get(ctx.state.auth!.account.id, ctx.params.id, IMAGE_ENDPOINTS);
      if (!FINAL_STATES.has(doc.state)) {
        ctx.status = 202;
        ctx.body = pendingView(doc);
        return;
      }
      ctx.status = doc.final_status ?? 502;
      ctx.type = 'application/json';
      ctx.body = await finalBody(deps, doc);
    });
  }
  return router;
}
