import Router from '@koa/router';
import { z } from 'zod';
import { errors } from '../../domain/errors';
import { requestQuote } from '../../domain/media/pricing';
import type { TaskDoc } from '../../infra/mongo';
import type { GatewayDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { usageCapture } from '../middleware/usage-capture';
import { jsonBody } from '../middleware/body';
import { idempotency } from '../middleware/idempotency';
import { resolveModel } from '../model-access';
import { unix } from '../media/list-query';
import { taskFailure } from '../media/speech-failure';
import { PublicUrl } from '../../domain/url-policy';
import { parseInput } from '../../domain/validation';
import { MediaTasks } from '../../services/media-tasks';

export const TRANSCRIPT_ENDPOINT = 'transcripts';
export const TRANSCRIPT_MODEL = 'transcript-extract';
const TRANSCRIPT_BODY_LIMIT = 64 * 1024;

/** `POST /v1/transcripts/extract` (docs/media/transcripts.md). */
const TranscriptRequest = z.object({
  model: z.string().min(1).default(TRANSCRIPT_MODEL),
  /** A short-video share link (public http(s)). */
  url: PublicUrl,
  /** Spoken language hint, ISO 639-1 (`zh`, `en`, ...); detected when omitted. */
  language: z.string().regex(/^[a-z]{2}(-[A-Za-z]{2})?$/, 'must be an ISO 639-1 code such as zh or en').optional(),
});

function transcriptView(doc: TaskDoc) {
  const x = doc.result?.extra ?? {};
  return {
    id: doc._id,
    object: 'transcript',
    model: doc.model,
    url: doc.input.url,
    text: x.text,
    language: x.language,
    duration_seconds: x.duration_seconds,
    segments: x.segments ?? [],
    created_at: unix(doc.created_at),
  };
}

/**
 * Short-video link -> spoken text, synchronous (the vendor blocks about
 * 55 s), charged per request. It runs as a task, so a crash or a failure
 * refunds the reservation in full.
 */
export function transcriptRoutes(deps: GatewayDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const tasks = new MediaTasks(deps);

  router.post(
    '/v1/transcripts/extract',
    usageCapture(deps, 'transcripts.extract'),
    authenticate(deps, { methods: 'all', billable: true, touchLastUsed: true }),
    rateLimit(),
    jsonBody(TRANSCRIPT_BODY_LIMIT),
    idempotency(deps),
    async (ctx: Ctx) => {
      const req = parseInput('body', TranscriptRequest, ctx.state.body);
      const model = resolveModel(deps, ctx, req.model);
      if (model.endpoint_type !== 'transcript' || deps.catalogue().channels(model, 'task').length === 0) throw errors.noChannel(model.id, 'transcripts extract');
      const doc = await tasks.submit({
        auth: ctx.state.auth!, requestId: ctx.state.requestId, kind: 'transcript', endpoint: TRANSCRIPT_ENDPOINT, model,
        input: { url: req.url, ...(req.language ? { language: req.language } : {}) }, quote: requestQuote(model),
      });
      ctx.state.usageRecorded = true;
      const final = await tasks.waitSettled(doc._id);
      if (final.state !== 'succeeded') throw taskFailure(final);
      ctx.body = transcriptView(final);
    },
  );
  return router;
}
