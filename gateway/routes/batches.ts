import Router from '@koa/router';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { jsonBody } from '../middleware/body';
import { validBody, validQuery } from '../middleware/validate';
import { isMultipart, readMultipart } from '../media/multipart';
import { publicBaseUrl } from '../../platform/config';
import { BATCH_LIMITS } from '../../capabilities/batches/limits';
import { CreateBatchBody, CreateMessageBatchBody, FilesListQuery, ListQuery, limitError } from '../../capabilities/batches/schemas';
import { anthropicBatchView, BatchService, fileView, openAiBatchView } from '../../capabilities/batches/service';

/**
 * OpenAI Files and Batches, and Anthropic Message Batches, on one engine (docs/batches.md).
 * Every call counts against the account's rate limits (rpm and concurrency), as every /v1/* call does
 * (spec 1 section 8, polling included); the batch's own lines are live calls and count as such.
 */
export function batchRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const service = new BatchService(deps);
  const read = [authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true }), rateLimit()];
  const create = [authenticate(deps, { methods: 'all', billable: true, touchLastUsed: true }), rateLimit()];
  const account = (ctx: Ctx) => ctx.state.auth!.account.id;
  // An upload's multipart overhead on top of the file limit.
  const uploadLimit = BATCH_LIMITS.maxFileBytes + 64 * 1024;

  // ---- files

  router.post('/v1/files', ...read, async (ctx) => {
    if (!isMultipart(ctx)) throw limitError('send the file as multipart/form-data with fields `file` and `purpose`', 'file');
    if (Number(ctx.get('content-length') || 0) > uploadLimit) {
      throw limitError(`the upload is larger than ${BATCH_LIMITS.maxFileBytes} bytes, the limit of a batch input file`, 'file');
    }
    const parts = await readMultipart(ctx, uploadLimit);
    const file = parts.find((p) => p.kind === 'file' && p.name === 'file');
    const purpose = parts.find((p) => p.kind === 'field' && p.name === 'purpose');
    if (!file || file.kind !== 'file') throw limitError('the `file` part is missing', 'file');
    const doc = await service.uploadFile(ctx.state.auth!, file.filename || 'batch.jsonl', file.data, purpose?.kind === 'field' ? purpose.value : '');
    ctx.body = fileView(doc);
  });
  router.get('/v1/files', ...read, async (ctx) => {
    const q = validQuery(ctx, FilesListQuery);
    const page = await service.listFiles(account(ctx), q);
    const data = page.items.map(fileView);
    ctx.body = { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
  });
  router.get('/v1/files/:id', ...read, async (ctx) => {
    const doc = await service.file(account(ctx), ctx.params.id);
    // A result file's size is stored at the batch's end; one made before that was stored is built to measure it.
    const bytes = doc.role === 'input' || doc.bytes > 0 ? doc.bytes : Buffer.byteLength(await service.fileContent(account(ctx), doc._id));
    ctx.body = fileView({ ...doc, bytes });
  });
  router.get('/v1/files/:id/content', ...read, async (ctx) => {
    ctx.type = 'application/jsonl';
    ctx.body = await service.fileContent(account(ctx), ctx.params.id);
  });
  router.delete('/v1/files/:id', ...read, async (ctx) => {
    await service.deleteFile(account(ctx), ctx.params.id);
    ctx.body = { id: ctx.params.id, object: 'file', deleted: true };
  });

  // ---- OpenAI batches

  router.post('/v1/batches', ...create, jsonBody(1024 * 1024), async (ctx) => {
    const body = validBody(ctx, CreateBatchBody);
    ctx.body = openAiBatchView(await service.createBatch(ctx.state.auth!, body));
  });
  router.get('/v1/batches', ...read, async (ctx) => {
    const q = validQuery(ctx, ListQuery);
    const page = await service.listBatches(account(ctx), 'openai', q.limit, q.after);
    const data = page.items.map(openAiBatchView);
    ctx.body = { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
  });
  router.get('/v1/batches/:id', ...read, async (ctx) => {
    ctx.body = openAiBatchView(await service.batchDoc(account(ctx), ctx.params.id, 'openai'));
  });
  router.post('/v1/batches/:id/cancel', ...read, async (ctx) => {
    ctx.body = openAiBatchView(await service.cancel(account(ctx), ctx.params.id, 'openai'));
  });

  // ---- Anthropic Message Batches

  router.post('/v1/messages/batches', ...create, jsonBody(BATCH_LIMITS.maxFileBytes), async (ctx) => {
    const raw = ctx.state.body as { requests?: unknown[] } | undefined;
    if (Array.isArray(raw?.requests) && raw.requests.length > BATCH_LIMITS.maxLines) {
      throw limitError(`${raw.requests.length} requests; the limit of requests per batch is ${BATCH_LIMITS.maxLines}`, 'requests');
    }
    const body = validBody(ctx, CreateMessageBatchBody);
    ctx.body = anthropicBatchView(await service.createMessageBatch(ctx.state.auth!, body.requests, publicBaseUrl(deps.config)));
  });
  router.get('/v1/messages/batches', ...read, async (ctx) => {
    const q = validQuery(ctx, ListQuery);
    const page = await service.listBatches(account(ctx), 'anthropic', q.limit, q.after_id);
    const data = page.items.map(anthropicBatchView);
    ctx.body = { data, has_more: page.hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  });
  router.get('/v1/messages/batches/:id', ...read, async (ctx) => {
    ctx.body = anthropicBatchView(await service.batchDoc(account(ctx), ctx.params.id, 'anthropic'));
  });
  router.get('/v1/messages/batches/:id/results', ...read, async (ctx) => {
    ctx.type = 'application/x-jsonl';
    ctx.body = await service.messageResults(account(ctx), ctx.params.id);
  });
  router.post('/v1/messages/batches/:id/cancel', ...read, async (ctx) => {
    ctx.body = anthropicBatchView(await service.cancel(account(ctx), ctx.params.id, 'anthropic'));
  });
  return router;
}
