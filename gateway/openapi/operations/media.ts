import { z } from 'zod';
import { ImagesRequest } from '../../../capabilities/media/images-request';
import { VideoRequest } from '../../../capabilities/media/video-request';
import { AvatarVideoRequest, LipsyncRequest, MotionRequest } from '../../../capabilities/media/video-dh-request';
import { ClipRequest } from '../../../capabilities/media/video-clip-request';
import { MusicAssetsRequest, MusicRequest } from '../../../capabilities/media/music-request';
import { SpeechRequest } from '../../../capabilities/media/speech-request';
import { VoiceCloneRequest } from '../../../capabilities/media/voice-request';
import { AvatarRequest } from '../../../capabilities/media/avatar-request';
import { listQuerySchema } from '../../../capabilities/media/list-query';
import { TranscriptRequest } from '../../routes/transcripts';
import { ListQuery as ClipTemplateQuery } from '../../routes/clip-templates';
import { MAX_CALLBACK_URL_LENGTH } from '../../../capabilities/webhooks/callback-url';
import { IDEMPOTENCY_HEADER, IDEMPOTENT_ERRORS, KEY_ERRORS, type Operation } from '../registry';

/** Media, digital-human and clip endpoints (spec 2). Errors in the OpenAI shape. */

const Id = z.object({ id: z.string().min(1) });
const Task = z.looseObject({ id: z.string(), status: z.string(), model: z.string(), created_at: z.number() });
const TaskList = z.looseObject({ object: z.literal('list'), data: z.array(z.looseObject({ id: z.string() })), next_cursor: z.string().nullable() });

/**
 * `callback_url` of the async families (capabilities/webhooks/callback-url.ts CALLBACK_KINDS):
 * read and checked by gateway/middleware/webhook-submission.ts before the family's parser, which
 * never sees it, so it is added to those families' schemas here.
 */
const CALLBACK_URL = z.url().max(MAX_CALLBACK_URL_LENGTH).nullable().optional().meta({
  description: 'Where to POST the task\'s final state (signed, retried; docs/webhooks.md). Production: https to a public host only; 400 naming `callback_url` otherwise.',
});
const withCallback = <T extends z.ZodObject>(schema: T) => schema.safeExtend({ callback_url: CALLBACK_URL });

/** A family's task list query (status comma list, from/to, limit, cursor), as `capabilities/media/list-query.ts` parses it. */
const listQuery = (statuses: string[]) => listQuerySchema('image', statuses, 100);

function submit(path: string, operationId: string, summary: string, schema: z.ZodType, example: unknown, description?: string, answer: z.ZodType = Task): Operation {
  return {
    method: 'post', path, operationId, summary, description, tag: 'Media', auth: 'key', errors: 'media',
    errorStatuses: IDEMPOTENT_ERRORS, headers: [IDEMPOTENCY_HEADER],
    body: { schema, example },
    responses: { 200: { description: 'The task (or, for synchronous calls, the result)', schema: answer } },
  };
}

/** A cloned voice (its id is `voice_id`, usable as speech's `voice_id`). */
const Voice = z.looseObject({ voice_id: z.string(), object: z.literal('voice'), model: z.string(), status: z.string(), created_at: z.number() });
/** An avatar (spec 2 section 2.3: `created_at` is ISO 8601). */
const Avatar = z.looseObject({ id: z.string(), object: z.literal('avatar'), name: z.string(), source_kind: z.enum(['image', 'video']), status: z.enum(['pending', 'ready', 'failed']), error: z.string().nullable(), created_at: z.string() });
const Transcript = z.looseObject({ id: z.string(), object: z.literal('transcript'), model: z.string(), text: z.string(), segments: z.array(z.looseObject({})), created_at: z.number() });

function read(path: string, operationId: string, summary: string, opts: Partial<Operation> = {}): Operation {
  return { method: 'get', path, operationId, summary, tag: 'Media', auth: 'key', errors: 'media', errorStatuses: [...KEY_ERRORS, 404], responses: { 200: { description: 'OK' } }, ...opts };
}

/** A synchronous images answer (OpenAI's shape), or the task of an `async: true` call. */
const ImagesAnswer = z.union([Task, z.looseObject({ created: z.number(), data: z.array(z.looseObject({})) })]);

const IMAGE_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'in_flight'];
const VIDEO_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'expired', 'cancelled'];

export const mediaOperations: Operation[] = [
  submit('/v1/images/generations', 'createImage', 'Generate images', withCallback(ImagesRequest),
    { model: 'gpt-image-1', prompt: 'a red fox', async: true },
    'Synchronous (after 90 s the answer keeps the connection alive with whitespace) or `async: true` (submit, then poll).', ImagesAnswer),
  {
    ...submit('/v1/images/edits', 'editImage', 'Edit images', withCallback(ImagesRequest),
      { model: 'gpt-image-1', prompt: 'make it blue', image: 'https://example.com/fox.png', async: true },
      'JSON as generations, or multipart/form-data (file field `image`, several as `image[]`). A reference image is required. At most 95 MB.', ImagesAnswer),
    body: { schema: withCallback(ImagesRequest), example: { model: 'gpt-image-1', prompt: 'make it blue', image: 'https://example.com/fox.png', async: true }, multipart: true },
  },
  read('/v1/images/generations', 'listImageTasks', 'List image tasks', { emptyQueryIsAbsent: true, query: listQuery(IMAGE_STATUSES), responses: { 200: { description: 'Newest first', schema: TaskList } } }),
  ...['generations', 'edits'].map((e) => read(`/v1/images/${e}/{id}`, `getImage${e === 'edits' ? 'Edit' : ''}Task`, `Poll an image ${e === 'edits' ? 'edit ' : ''}task`, {
    params: Id,
    description: '202 with `{id, status, model, created_at}` while running; any other status is the final answer, byte-identical to the synchronous call.',
    responses: { 200: { description: 'The final answer' }, 202: { description: 'Still running', schema: Task } },
  })),

  submit('/v1/videos/generations', 'createVideo', 'Generate a video (also digital humans and clips)',
    z.union([VideoRequest, AvatarVideoRequest, LipsyncRequest, MotionRequest, ClipRequest].map(withCallback)),
    { model: 'seedance-1-0-pro', content: [{ type: 'text', text: 'a fox running' }], duration: 5 },
    'Asynchronous. Digital-human (`dh-*`) and clip (`clip-*`) models take their own fields.'),
  read('/v1/videos/generations', 'listVideoTasks', 'List video tasks', { emptyQueryIsAbsent: true, query: listQuery(VIDEO_STATUSES), responses: { 200: { description: 'Newest first', schema: TaskList } } }),
  read('/v1/videos/generations/{id}', 'getVideoTask', 'Poll a video task', { params: Id, responses: { 200: { description: 'The task', schema: Task } } }),

  submit('/v1/videos/avatars', 'createAvatar', 'Register an avatar', withCallback(AvatarRequest),
    { name: 'Ada', source_url: 'https://example.com/ada.png' }, 'Asynchronous, charged per creation; status `pending`, then `ready` or `failed` (refunded).', Avatar),
  read('/v1/videos/avatars', 'listAvatars', 'List own avatars (200 newest)'),
  read('/v1/videos/avatars/presets', 'listAvatarPresets', 'Platform avatar presets'),
  read('/v1/videos/avatars/{id}', 'getAvatar', 'An avatar', { params: Id, responses: { 200: { description: 'The avatar', schema: Avatar } } }),
  { ...read('/v1/videos/avatars/{id}', 'deleteAvatar', 'Delete an avatar (400 while pending)', { params: Id }), method: 'delete' },
  read('/v1/videos/clip-templates', 'listClipTemplates', 'Clip templates', { query: ClipTemplateQuery, emptyQueryIsAbsent: true, errorStatuses: [...KEY_ERRORS, 403, 502, 503] }),
  read('/v1/videos/clip-templates/{id}', 'getClipTemplate', 'A clip template with its canvas and layers', { params: Id, errorStatuses: [...KEY_ERRORS, 403, 404, 502, 503] }),

  submit('/v1/music/generations', 'createMusic', 'Generate music (two songs)', withCallback(MusicRequest), { model: 'suno-v4-5', prompt: 'a calm piano piece' }),
  read('/v1/music/generations', 'listMusicTasks', 'List music tasks', { emptyQueryIsAbsent: true, query: listQuery(['processing', 'succeeded', 'failed', 'expired', 'cancelled']), responses: { 200: { description: 'Newest first', schema: TaskList } } }),
  read('/v1/music/generations/{id}', 'getMusicTask', 'Poll a music task', { params: Id }),
  {
    method: 'post', path: '/v1/music/assets', operationId: 'musicAssets', summary: 'Fresh links and lyrics of a finished generation', tag: 'Media',
    auth: 'key', errors: 'media', errorStatuses: [...KEY_ERRORS, 404, 413, 502, 503],
    body: { schema: MusicAssetsRequest, example: { generation_id: 'task_x' } }, responses: { 200: { description: 'The songs' } },
  },

  submit('/v1/audio/speech', 'createSpeech', 'Text to speech', withCallback(SpeechRequest),
    { model: 'speech-2-5-turbo', text: 'Hello', voice_id: 'male-qn-qingse', async: true }, 'Synchronous, or `async: true`; charged per character.'),
  read('/v1/audio/speech', 'listSpeechTasks', 'List speech tasks', { emptyQueryIsAbsent: true, query: listQuery(['pending', 'succeeded', 'failed']), responses: { 200: { description: 'Newest first', schema: TaskList } } }),
  read('/v1/audio/speech/{id}', 'getSpeechTask', 'Poll a speech task', { params: Id }),
  submit('/v1/audio/voices', 'cloneVoice', 'Clone a voice', VoiceCloneRequest, { audio_url: 'https://example.com/voice.mp3' }, 'Synchronous; charged per creation.', Voice),
  submit('/v1/audio/voice-clone', 'cloneVoiceAlias', 'Clone a voice (the catalogue name)', VoiceCloneRequest, { audio_url: 'https://example.com/voice.mp3' }, 'Synchronous; charged per creation.', Voice),
  read('/v1/audio/voices', 'listVoices', 'Preset and cloned voices'),
  read('/v1/audio/voices/{id}', 'getVoice', 'A cloned voice', { params: Id, responses: { 200: { description: 'The voice', schema: Voice } } }),

  submit('/v1/transcripts/extract', 'extractTranscript', 'Spoken text of a short video', TranscriptRequest,
    { url: 'https://example.com/v/123' }, 'Synchronous (about 55 s at the vendor); charged per request.', Transcript),
];
