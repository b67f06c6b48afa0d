import Router from '@koa/router';
import { z } from 'zod';
import { errors } from '../../domain/errors';
import { baseView } from '../../capabilities/knowledge/bases';
import { KbIngestion, MAX_DOCUMENT_BYTES, baseProgress, type UploadInput } from '../../capabilities/knowledge/ingestion';
import type { PlatformDeps } from '../../capabilities/deps';
import type { KnowledgeDeps } from '../../capabilities/knowledge/deps';
import type { Ctx, GatewayState } from '../context';
import { jsonBody } from '../middleware/body';
import { isMultipart, readMultipart } from '../media/multipart';
import { requireAdmin } from './admin';
import { validBody } from '../middleware/validate';

/**
 * Operator API for loading knowledge bases (the console calls the same
 * services for a signed-in user): team bases, document uploads, builds and
 * document deletion. `Authorization: Bearer <ADMIN_TOKEN>`. Rules live in
 * capabilities/knowledge/bases.ts and capabilities/knowledge/ingestion.ts.
 */
const Readers = z.union([z.literal('all'), z.array(z.string().min(1).max(100)).max(10_000)]);
const Compiler = z.enum(['rules', 'llm']);
export const NewBase = z
  .object({ kb_id: z.string().min(1).max(64).optional(), name: z.string().min(1).max(200), readers: Readers.optional(), compiler: Compiler.optional(), compiler_model: z.string().min(1).max(200).nullable().optional() })
  .strict();
export const BasePatch = z
  .object({ name: z.string().min(1).max(200).optional(), readers: Readers.optional(), compiler: Compiler.optional(), compiler_model: z.string().min(1).max(200).nullable().optional() })
  .strict();
export const JsonDocument = z
  .object({
    filename: z.string().min(1).max(400),
    content: z.string(),
    /** `content` is base64 (PDF, DOCX or any bytes); otherwise it is the text itself. */
    base64: z.boolean().optional(),
    content_type: z.string().max(200).optional(),
  })
  .strict();

/** Multipart overhead and base64 (4/3) on top of the document limit. */
const MULTIPART_LIMIT = MAX_DOCUMENT_BYTES + 1024 * 1024;
const JSON_LIMIT = Math.ceil((MAX_DOCUMENT_BYTES * 4) / 3) + 1024 * 1024;

async function uploadOf(ctx: Ctx): Promise<UploadInput> {
  if (isMultipart(ctx)) {
    const parts = await readMultipart(ctx, MULTIPART_LIMIT);
    const file = parts.find((p) => p.kind === 'file' && p.name === 'file');
    if (!file || file.kind !== 'file') throw errors.invalidRequest('file: the multipart field `file` is required', 'file');
    const named = parts.find((p) => p.kind === 'field' && p.name === 'filename');
    const filename = named?.kind === 'field' && named.value ? named.value : file.filename;
    return { filename, contentType: file.contentType, data: file.data };
  }
  const input = validBody(ctx, JsonDocument);
  if (input.base64) {
    const clean = input.content.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) throw errors.invalidRequest('content: not valid base64', 'content');
    return { filename: input.filename, contentType: input.content_type, data: Buffer.from(clean, 'base64') };
  }
  return { filename: input.filename, contentType: input.content_type, data: Buffer.from(input.content, 'utf8') };
}

export function adminKbRoutes(deps: PlatformDeps & KnowledgeDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1/accounts/:id/kbs' });
  const body = jsonBody(64 * 1024);
  const docBody = jsonBody(JSON_LIMIT);
  router.use(requireAdmin(deps.config.ADMIN_TOKEN));
  const buildView = async (b: Parameters<typeof KbIngestion.view>[0]) => KbIngestion.view(b, await deps.kbIngestion.isLive(b));

  router.post('/', body, async (ctx) => {
    const input = validBody(ctx, NewBase);
    ctx.status = 201;
    ctx.body = baseView(await deps.kbBases.create(ctx.params.id, input));
  });
  router.get('/', async (ctx) => {
    ctx.body = { object: 'list', data: (await deps.kbBases.list(ctx.params.id)).map(baseView) };
  });
  router.get('/:kb', async (ctx) => {
    ctx.body = baseView(await deps.kbBases.get(ctx.params.id, ctx.params.kb));
  });
  router.patch('/:kb', body, async (ctx) => {
    await deps.kbBases.get(ctx.params.id, ctx.params.kb); // another account's base: 404 before any 400
    const patch = validBody(ctx, BasePatch);
    ctx.body = baseView(await deps.kbBases.update(ctx.params.id, ctx.params.kb, patch));
  });
  router.delete('/:kb', async (ctx) => {
    await deps.kbBases.remove(ctx.params.id, ctx.params.kb);
    ctx.body = { id: ctx.params.kb, object: 'kb', deleted: true };
  });

  router.post(
    '/:kb/documents',
    async (ctx, next) => {
      // Unknown account or base: 404 before reading a large body.
      await deps.kbBases.get(ctx.params.id, ctx.params.kb);
      if (isMultipart(ctx)) return next();
      return docBody(ctx, next);
    },
    async (ctx) => {
      const upload = await uploadOf(ctx);
      const { build, duplicate } = await deps.kbIngestion.upload(ctx.params.id, ctx.params.kb, upload);
      ctx.status = duplicate ? 200 : 202;
      ctx.body = { ...(await buildView(build)), duplicate };
    },
  );
  router.get('/:kb/documents', async (ctx) => {
    const data = await deps.kbIngestion.listDocuments(ctx.params.id, ctx.params.kb);
    ctx.body = { object: 'list', data, progress: baseProgress(data) };
  });
  router.delete('/:kb/documents/:doc', async (ctx) => {
    await deps.kbIngestion.deleteDocument(ctx.params.id, ctx.params.kb, ctx.params.doc);
    ctx.body = { id: ctx.params.doc, object: 'kb.document', deleted: true };
  });
  router.get('/:kb/builds/:build', async (ctx) => {
    ctx.body = await buildView(await deps.kbIngestion.getBuild(ctx.params.id, ctx.params.kb, ctx.params.build));
  });
  return router;
}
