import Router from '@koa/router';
import { errors } from '../../domain/errors';
import { characterQuote, creationQuote } from '../../domain/media/pricing';
import { PIN_CHANNEL_KEY } from '../../providers/media/dh-video';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { jsonBody } from '../middleware/body';
import { resolveModel } from '../model-access';
import { mediaTaskRoutes } from '../media/task-routes';
import { parseSpeechRequest } from '../../capabilities/media/speech-request';
import { speechView } from '../../capabilities/media/speech-view';
import { taskFailure } from '../../capabilities/media/speech-failure';
import { VOICE_PRESETS } from '../../capabilities/media/voice-presets';
import { DEFAULT_PREVIEW_MODEL, parseVoiceCloneRequest } from '../../capabilities/media/voice-request';
import { listVoices, usableVoice, VOICE_ENDPOINT, voiceView } from '../../capabilities/media/voice-store';
import { setTaskCostHeaders } from '../media/cost-headers';

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
export function audioRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const speech = mediaTaskRoutes(deps, router, { kind: 'speech', endpointTypes: ['speech'], label: 'audio speech' });
  const voices = mediaTaskRoutes(deps, router, { kind: 'voice', endpointTypes: ['voice'], label: 'audio voices' });
  const { tasks, read } = speech;

  router.post('/v1/audio/speech', ...speech.submitChain('audio.speech', jsonBody(SPEECH_BODY_LIMIT)), async (ctx: Ctx) => {
    const req = parseSpeechRequest(ctx.state.body);
    const model = resolveModel(deps, ctx, req.model);
    const channels = speech.channels(model);
    const voice = await usableVoice(deps.db, ctx.state.auth!.account.id, req.voice_id);
    const { characters: _c, ...fields } = req;
    const input: Record<string, unknown> = { ...fields, model: model.id };
    if (voice.channel && channels.some((c) => c.id === voice.channel)) input[PIN_CHANNEL_KEY] = voice.channel;
    const doc = await speech.submit(ctx, { endpoint: SPEECH_ENDPOINT, model, input, quote: characterQuote(model, req.characters) });
    if (req.async) {
      ctx.body = speechView(doc);
      return;
    }
    const final = await tasks.waitSettled(doc._id);
    if (final.state !== 'succeeded') throw taskFailure(final);
    setTaskCostHeaders(ctx, final);
    ctx.body = speechView(final);
  });

  speech.list('/v1/audio/speech', { endpoints: [SPEECH_ENDPOINT], statuses: SPEECH_STATUSES, view: speechView });
  speech.get('/v1/audio/speech/:id', { endpoints: [SPEECH_ENDPOINT], view: speechView });

  /** Voice cloning, synchronous (MiniMax clones in seconds); the voice id is the task id. */
  const cloneVoice = async (ctx: Ctx) => {
    const req = parseVoiceCloneRequest(ctx.state.body);
    const model = voices.model(ctx, req.model);
    const input: Record<string, unknown> = { ...req, model: model.id };
    if (req.text !== undefined) {
      const preview = deps.catalogue().resolve(req.preview_model ?? DEFAULT_PREVIEW_MODEL);
      if (!preview || preview.endpoint_type !== 'speech') throw errors.invalidRequest('preview_model must be a speech model', 'preview_model');
      input.preview_model = preview.id;
    } else {
      delete input.preview_model;
    }
    const doc = await voices.submit(ctx, { endpoint: VOICE_ENDPOINT, model, input, quote: creationQuote(model) });
    const final = await tasks.waitSettled(doc._id);
    if (final.state !== 'succeeded') throw taskFailure(final);
    setTaskCostHeaders(ctx, final);
    ctx.body = voiceView(final);
  };
  router.post('/v1/audio/voices', ...voices.submitChain('audio.voices', jsonBody(VOICE_BODY_LIMIT)), cloneVoice);
  // The catalogue's name for the same operation.
  router.post('/v1/audio/voice-clone', ...voices.submitChain('audio.voices', jsonBody(VOICE_BODY_LIMIT)), cloneVoice);

  router.get('/v1/audio/voices', ...read, async (ctx) => {
    const cloned = await listVoices(deps.db, ctx.state.auth!.account.id);
    ctx.body = { object: 'list', presets: VOICE_PRESETS, cloned: cloned.map(voiceView) };
  });

  voices.get('/v1/audio/voices/:id', { endpoints: [VOICE_ENDPOINT], view: voiceView });
  return router;
}
