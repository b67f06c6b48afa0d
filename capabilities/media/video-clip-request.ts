import { z } from 'zod';
import { errors } from '../../domain/errors';
import type { Model } from '../../domain/catalogue';
import { secondsQuote } from '../../domain/media/pricing';
import { MAX_SECONDS } from './video-common';
import { PublicUrl } from '../../domain/url-policy';
import { parseInput } from '../../domain/validation';
import type { DhSubmission } from './video-dh-request';

/**
 * Clip editing on `POST /v1/videos/generations` (spec 2 section 4.4):
 * `clip-realman`, `clip-mixcut`, `clip-news`. Reserved: the clip cap of
 * 300 s, or a longer explicit `duration`; charged the result's seconds.
 */
export const CLIP_CAP_SECONDS = 300;
export const NEWS_SECONDS = { min: 5, max: 300 } as const;
export const MAX_MATERIALS = 10;
export type ClipVariant = 'realman' | 'mixcut' | 'news';

const Material = z.object({
  type: z.enum(['image', 'video']),
  file_url: PublicUrl,
  sound_switch: z.boolean().optional(),
});

export const ClipRequest = z.object({
  model: z.string(),
  style_id: z.string().min(1, 'style_id is required'),
  source_video_url: PublicUrl.optional(),
  audio_url: PublicUrl.optional(),
  materials: z.array(Material).max(MAX_MATERIALS, `materials holds at most ${MAX_MATERIALS} items`).optional(),
  title: z.string().min(1).optional(),
  // Any number for news (clamped to its range); the others are held to MAX_SECONDS in parseClip.
  duration: z.number().optional(),
  material_composition: z.enum(['random', 'order']).optional(),
  preprocess: z.enum(['roughCut', 'sliceMerge']).optional(),
  bgm: z
    .object({ mode: z.enum(['auto', 'none', 'custom']), url: PublicUrl.optional(), volume: z.number().min(0).max(1).optional() })
    .refine((b) => b.mode !== 'custom' || b.url !== undefined, { message: 'bgm.url is required when mode is custom', path: ['url'] })
    .optional(),
  cover_url: PublicUrl.optional(),
  introduce_card: z.object({ name: z.string().min(1), description: z.string().min(1) }).optional(),
  language: z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'language is a language code such as zh or en').optional(),
});
type ClipRequest = z.infer<typeof ClipRequest>;

/** Which clip model: from the catalogue's scene (falls back to the id). */
export function clipVariant(model: Model): ClipVariant {
  const scene = String(model.media?.scene ?? '');
  if (scene === 'realMan' || model.id.includes('realman')) return 'realman';
  if (scene === 'oralMixCutting' || model.id.includes('mixcut')) return 'mixcut';
  return 'news';
}

/** Fields that only some variants take (spec table "Applies to"); sending them elsewhere is a mistake worth a 400. */
const ONLY_FOR: Partial<Record<keyof ClipRequest, ClipVariant[]>> = {
  source_video_url: ['realman'],
  audio_url: ['mixcut'],
  material_composition: ['news'],
  preprocess: ['realman'],
};
const REQUIRED: Record<ClipVariant, (keyof ClipRequest)[]> = {
  realman: ['source_video_url'],
  mixcut: ['audio_url', 'materials'],
  news: ['materials', 'title'],
};

export function parseClip(model: Model, body: unknown): DhSubmission {
  const req = parseInput('body', ClipRequest, body);
  const variant = clipVariant(model);
  for (const [field, variants] of Object.entries(ONLY_FOR) as [keyof ClipRequest, ClipVariant[]][]) {
    if (req[field] !== undefined && !variants.includes(variant)) throw errors.invalidRequest(`${field} does not apply to ${model.id}`, field);
  }
  for (const field of REQUIRED[variant]) {
    const v = req[field];
    if (v === undefined || (Array.isArray(v) && v.length === 0)) throw errors.invalidRequest(`${field} is required for ${model.id}`, field);
  }
  const { model: _m, duration, ...rest } = req;
  const input: Record<string, unknown> = { kind: 'clip', ...rest };
  let explicit = duration;
  if (variant === 'news' && duration !== undefined) {
    // news: the result length; out of range is clamped, not refused.
    explicit = Math.min(NEWS_SECONDS.max, Math.max(NEWS_SECONDS.min, duration));
    input.duration = explicit;
  } else if (duration !== undefined && duration <= 0) {
    throw errors.invalidRequest('duration must be positive', 'duration');
  } else if (duration !== undefined && duration > MAX_SECONDS) {
    throw errors.invalidRequest(`duration is at most ${MAX_SECONDS} seconds`, 'duration');
  }
  const reserved = Math.max(CLIP_CAP_SECONDS, Math.ceil(explicit ?? 0));
  return { input, quote: secondsQuote(model, { seconds: reserved }) };
}
