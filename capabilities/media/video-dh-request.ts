import { z } from 'zod';
import { errors } from '../../domain/errors';
import type { Model } from '../../domain/catalogue';
import { secondsQuote, type MediaQuote } from '../../domain/media/pricing';
import { Seconds } from './video-common';
import { PublicUrl } from '../../domain/url-policy';
import { parseInput } from '../../domain/validation';

/**
 * Digital-human submissions on `POST /v1/videos/generations` (spec 2 section
 * 4.4): `dh-avatar`, `dh-lipsync*`, `dh-motion`. `duration` is required and
 * only the reservation; the charge is the seconds actually produced. The
 * result is the upstream body of the digital-human task API (`kind` + fields).
 */
export const MAX_SPEECH_CHARS = 10_000;
export const MAX_TITLE_CHARS = 20;
export const MAX_PERSONS = 7;
export const MOTION_TIERS = ['fast', 'standard', 'max'] as const;

const chars = (s: string) => [...s].length;

export const AvatarVideoRequest = z.object({
  model: z.string(),
  avatar: z.string().min(1, 'avatar is required'),
  audio_url: PublicUrl.optional(),
  voice: z.string().min(1).optional(),
  text: z.string().min(1).refine((t) => chars(t) <= MAX_SPEECH_CHARS, `text must be at most ${MAX_SPEECH_CHARS} characters`).optional(),
  title: z.string().refine((t) => chars(t) <= MAX_TITLE_CHARS, `title must be at most ${MAX_TITLE_CHARS} characters`).optional(),
  duration: Seconds,
});
export type AvatarVideoRequest = z.infer<typeof AvatarVideoRequest>;

export const LipsyncRequest = z.object({
  model: z.string(),
  source_video_url: PublicUrl,
  audio_url: PublicUrl,
  duration: Seconds,
});

const PersonImage = z.object({ type: z.literal('image_url', { error: 'content items of dh-motion are {type: image_url, image_url: {url}}' }), image_url: z.object({ url: PublicUrl }) });
export const MotionRequest = z.object({
  model: z.string(),
  source_video_url: PublicUrl,
  content: z.array(PersonImage).min(1, 'content must hold 1 to 7 person images').max(MAX_PERSONS, 'content must hold 1 to 7 person images'),
  face_count: z.number().int().min(1).max(MAX_PERSONS).optional(),
  resolution: z.enum(MOTION_TIERS).default('standard'),
  duration: Seconds,
});

export interface DhSubmission {
  input: Record<string, unknown>;
  quote: MediaQuote;
}

/** dh-avatar: exactly one of `audio_url` or `voice` + `text`. The avatar and voice references are checked against the account afterwards. */
export function parseAvatarVideo(model: Model, body: unknown): { req: AvatarVideoRequest; quote: MediaQuote } {
  const req = parseInput('body', AvatarVideoRequest, body);
  const speech = req.voice !== undefined || req.text !== undefined;
  if (req.audio_url !== undefined && speech) throw errors.invalidRequest('give exactly one of audio_url or voice + text, not both', 'audio_url');
  if (req.audio_url === undefined) {
    if (!speech) throw errors.invalidRequest('audio_url or voice + text is required', 'audio_url');
    if (req.voice === undefined) throw errors.invalidRequest('voice is required with text', 'voice');
    if (req.text === undefined) throw errors.invalidRequest('text is required with voice', 'text');
  }
  return { req, quote: secondsQuote(model, { seconds: req.duration }) };
}

/** The upstream body of a dh-avatar task, once the avatar resolved to its upstream id. */
export function avatarVideoInput(req: AvatarVideoRequest, upstreamAvatar: string): Record<string, unknown> {
  const { model: _m, duration: _d, avatar: _a, ...rest } = req;
  return { kind: 'avatar_video', avatar: upstreamAvatar, ...rest };
}

export function parseLipsync(model: Model, body: unknown): DhSubmission {
  const { model: _m, duration, ...rest } = parseInput('body', LipsyncRequest, body);
  return { input: { kind: 'lipsync', ...rest }, quote: secondsQuote(model, { seconds: duration }) };
}

/** dh-motion: `resolution` (fast / standard / max) is the price tier; `face_count` must match the images. */
export function parseMotion(model: Model, body: unknown): DhSubmission {
  const req = parseInput('body', MotionRequest, body);
  const images = req.content.map((c) => c.image_url.url);
  if (req.face_count !== undefined && req.face_count !== images.length) {
    throw errors.invalidRequest(`face_count (${req.face_count}) must equal the number of person images (${images.length})`, 'face_count');
  }
  return {
    input: { kind: 'motion', source_video_url: req.source_video_url, images, face_count: req.face_count ?? images.length, resolution: req.resolution },
    quote: secondsQuote(model, { seconds: req.duration, tier: req.resolution }),
  };
}
