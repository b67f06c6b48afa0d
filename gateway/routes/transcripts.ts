import Router from '@koa/router';
import { z } from 'zod';
import { requestQuote } from '../../domain/media/pricing';
import type { TaskDocument } from '../../domain/media/task';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { jsonBody } from '../middleware/body';
import { mediaTaskRoutes } from '../media/task-routes';
import { unix } from '../../capabilities/media/list-query';
import { taskFailure } from '../../capabilities/media/speech-failure';
import { PublicUrl } from '../../domain/url-policy';
import { parseInput } from '../../domain/validation';
import { setTaskCostHeaders } from '../media/cost-headers';

export const TRANSCRIPT_ENDPOINT = 'transcripts';
export const TRANSCRIPT_MODEL = 'transcript-extract';
const TRANSCRIPT_BODY_LIMIT = 64 * 1024;

/** `POST /v1/transcripts/extract` (docs/media/transcripts.md). */
export const TranscriptRequest = z.object({
  model: z.string().min(1).default(TRANSCRIPT_MODEL),
  /** A short-video share link (public http(s)). */
  url: PublicUrl,
  /** Spoken language hint, ISO 639-1 (`zh`, `en`, ...); detected when omitted. */
  language: z.string().regex(/^[a-z]{2}(-[A-Za-z]{2})?$/, 'must be an ISO 639-1 code such as zh or en').optional(),
});

function transcriptView(doc: TaskDocument) {
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
export function transcriptRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const transcripts = mediaTaskRoutes(deps, router, { kind: 'transcript', endpointTypes: ['transcript'], label: 'transcripts extract' });

  router.post('/v1/transcripts/extract', ...transcripts.submitChain('transcripts.extract', jsonBody(TRANSCRIPT_BODY_LIMIT)), async (ctx: Ctx) => {
    const req = parseInput('body', TranscriptRequest, ctx.state.body);
    const model = transcripts.model(ctx, req.model);
    const input = { url: req.url, ...(req.language ? { language: req.language } : {}) };
    const doc = await transcripts.submit(ctx, { endpoint: TRANSCRIPT_ENDPOINT, model, input, quote: requestQuote(model) });
    const final = await transcripts.tasks.waitSettled(doc._id);
    if (final.state !== 'succeeded') throw taskFailure(final);
    setTaskCostHeaders(ctx, final);
    ctx.body = transcriptView(final);
  });
  return router;
}
