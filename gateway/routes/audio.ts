import Router from '@koa/router';
import { errors } from '../../domain/errors';
import { characterQuote, creationQuote } from '../../domain/media/pricing';
import { PIN_CHANNEL_KEY } from '../../providers/media/dh-video';
import type { GatewayDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { usageCapture } from '../middleware/usage-capture';
import { jsonBody } from '../middleware/body';
import { idempotency } from '../middleware/idempotency';
import { resolveModel } from '../model-access';
import { listTasks, parseListQuery } from '../media/list-query';
import { parseSpeechRequest } from '../media/speech-request';
import { speechView } from '../media/speech-view';
import { taskFailure } from '../media/speech-failure';
import { VOICE_PRESETS } from '../media/voice-presets';
import { DEFAULT_PREVIEW_MODEL, parseVoiceCloneRequest } from '../media/voice-request';
import { listVoices, usableVoice, VOICE_ENDPOINT, voiceView } from '../media/voice-store';
import { MediaTasks } from '../../services/media-tasks';

export const SPEECH_ENDPOINT = 'speech';
/** 50000 characters of text (async) fit well under 1 MB. */
const SPEECH_BODY_LIMIT = 1024 * 1024;
const VOICE_BODY_LIMIT = 64 * 1024;
const SPEECH_STATUSES = ['pending', 'succeeded', 'failed'];

/**
 * Speech and voices (spec 2 section 4.7; docs/media/speech.md): MiniMax-style
 * T2A charged per character, synchronous by default (the answer waits on
 * the task's workflow) or `async: true`; poll and list; voice cloning
 * (charged per creation) and the voice list with the platform presets.
 */
export function audioRoutes(deps: GatewayDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const tasks = new MediaTasks(deps);
  const read = [authenticate(deps, { methods: 'all', billable: false, touchLastUsed: true }), rateLimit()];
  const submitChain = (usage: string, limit: number) => [
    usageCapture(deps, usage),
    authenticate(deps, { methods: 'all', billable: true, touchLastUsed: true }),
    rateLimit(),
    jsonBody(limit),
    idempotency(deps),
  ];

  router.post('/v1/audio/speech', ...submitChain('audio.speech', SPEECH_BODY_LIMIT), async (ctx: Ctx) => {
    const req = parseSpeechRequest(ctx.state.body);
    const model = resolveModel(deps, ctx, req.model);
    const channels = deps.catalogue().channels(model, 'task');
    if (model.endpoint_type !== 'speech' || channels.length === 0) throw errors.noChannel(model.id, 'audio speech');
    const voice = await usableVoice(deps.db, ctx.state.auth!.account.id, req.voice_id);
    const { characters: _c, ...fields } = req;
    const input: Record<string, unknown> = { ...fields, model: model.id };
    if (voice.channel && channels.some((c) => c.id === voice.channel)) input[PIN_CHANNEL_KEY] = voice.channel;
    const doc = await tasks.submit({
      auth: ctx.state.auth!, requestId: ctx.state.requestId, kind: 'speech', endpoint: SPEECH_ENDPOINT, model,
      input, quote: characterQuote(model, req.characters),
    });
    ctx.state.usageRecorded = true;
    if (req.async) {
      ctx.body = speechView(doc);
      return;
    }
    const final = await tasks.waitSettled(doc._id);
    if (final.state !== 'succeeded') throw taskFailure(final);
    ctx.body = speechView(final);
  });

  router.get('/v1/audio/speech', ...read, async (ctx) => {
    const q = parseListQuery(ctx.query, 'speech', SPEECH_STATUSES);
    const page = await listTasks(deps.db, ctx.state.auth!.account.id, [SPEECH_ENDPOINT], q);
    ctx.body = { object: 'list', data: page.items.map(speechView), next_cursor: page.nextCursor };
  });

  router.get('/v1/audio/speech/:id', ...read, async (ctx) => {
    ctx.body = speechView(await tasks.get(ctx.state.auth!.account.id, ctx.params.id, [SPEECH_ENDPOINT]));
  });

  /** Voice cloning, synchronous (MiniMax clones in seconds); the voice id is the task id. */
  const cloneVoice = async (ctx: Ctx) => {
    const req = parseVoiceCloneRequest(ctx.state.body);
    const model = resolveModel(deps, ctx, req.model);
    if (model.endpoint_type !== 'voice' || deps.catalogue().channels(model, 'task').length === 0) throw errors.noChannel(model.id, 'audio voices');
    const input: Record<string, unknown> = { ...req, model: model.id };
    if (req.text !== undefined) {
      const preview = deps.catalogue().resolve(req.preview_model ?? DEFAULT_PREVIEW_MODEL);
      if (!preview || preview.endpoint_type !== 'speech') throw errors.invalidRequest('preview_model must be a speech model', 'preview_model');
      input.preview_model = preview.id;
    } else {
      delete input.preview_model;
    }
    const doc = await tasks.submit({
      auth: ctx.state.auth!, requestId: ctx.state.requestId, kind: 'voice', endpoint: VOICE_ENDPOINT, model, input, quote: creationQuote(model),
    });
    ctx.state.usageRecorded = true;
    const final = await tasks.waitSettled(doc._id);
    if (final.state !== 'succeeded') throw taskFailure(final);
    ctx.body = voiceView(final);
  };
  router.post('/v1/audio/voices', ...submitChain('audio.voices', VOICE_BODY_LIMIT), cloneVoice);
  // The catalogue's name for the same operation.
  router.post('/v1/audio/voice-clone', ...submitChain('audio.voices', VOICE_BODY_LIMIT), cloneVoice);

  router.get('/v1/audio/voices', ...read, async (ctx) => {
    const cloned = await listVoices(deps.db, ctx.state.auth!.account.id);
    ctx.body = { object: 'list', presets: VOICE_PRESETS, cloned: cloned.map(voiceView) };
  });

  router.get('/v1/audio/voices/:id', ...read, async (ctx) => {
    ctx.body = voiceView(await tasks.get(ctx.state.auth!.account.id, ctx.params.id, [VOICE_ENDPOINT]));
  });
  return router;
}
