import { z } from 'zod';
import { errors } from '../../domain/errors';
import type { Model } from '../../domain/catalogue';
import { secondsQuote, type MediaQuote } from '../../domain/media/pricing';
import { Seconds } from './video-common';
import { isDataImage, isPublicHttpUrl } from '../../domain/url-policy';
import { parseInput } from '../../domain/validation';

/**
 * `POST /v1/videos/generations` for the video models (spec 2 section 4.4),
 * sent upstream as an Ark content-generation task.
 */

/** Reserved when `duration` is omitted. */
export const DEFAULT_RESERVED_SECONDS = 12;
/** `video_mode: extend` continues a reference video for 2 to 10 s. */
export const EXTEND_SECONDS = { min: 2, max: 10 } as const;
/** Reference images allowed when the catalogue says nothing (`media.max_reference_images`). */
export const DEFAULT_MAX_REFERENCE_IMAGES = 10;
/** The upstream's resolution when none is sent; tiered prices are quoted at it. */
export const UPSTREAM_DEFAULT_RESOLUTION = '720p';

const UrlObject = z.object({ url: z.string().min(1, 'url is required') });
const ContentItem = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string().min(1, 'text must not be empty') }),
  z.object({ type: z.literal('image_url'), image_url: UrlObject, role: z.enum(['first_frame', 'last_frame', 'reference_image']).optional() }),
  z.object({ type: z.literal('video_url'), video_url: UrlObject, role: z.literal('reference_video').default('reference_video') }),
  z.object({ type: z.literal('audio_url'), audio_url: UrlObject, role: z.literal('reference_audio').default('reference_audio') }),
], { error: 'each content item is {type: text, text}, {type: image_url, image_url: {url}} or a reference item with video_url / audio_url' });
type ContentItem = z.infer<typeof ContentItem>;

export const VideoRequest = z.object({
  model: z.string().min(1),
  content: z.array(ContentItem).min(1, 'content must hold at least a text item'),
  duration: Seconds.optional(),
  ratio: z.string().min(1).optional(),
  resolution: z.string().min(1).optional(),
  watermark: z.boolean().optional(),
  seed: z.number().int().min(-1).optional(),
  framespersecond: z.number().int().positive().optional(),
  generate_audio: z.boolean().optional(),
  camera_fixed: z.boolean().optional(),
  return_last_frame: z.boolean().optional(),
  video_mode: z.enum(['extend', 'rewrite']).optional(),
  portrait_auth: z.boolean().optional(),
});
export type VideoRequest = z.infer<typeof VideoRequest>;

const media = (model: Model) => model.media ?? {};
const flag = (model: Model, name: string) => media(model)[name] === true;
const resolutionsOf = (model: Model) => (Array.isArray(media(model).resolutions) ? (media(model).resolutions as string[]) : null);

function checkContent(model: Model, content: ContentItem[]): void {
  if (!content.some((i) => i.type === 'text')) throw errors.invalidRequest('content must include a {type: text, text} item', 'content');
  const maxRefs = typeof media(model).max_reference_images === 'number' ? (media(model).max_reference_images as number) : DEFAULT_MAX_REFERENCE_IMAGES;
  const refs = content.filter((i) => i.type === 'image_url' && i.role === 'reference_image').length;
  if (refs > maxRefs) throw errors.invalidRequest(`at most ${maxRefs} reference images for ${model.id}`, 'content');
  content.forEach((item, i) => {
    const param = `content.${i}.${item.type}.url`;
    if (item.type === 'image_url') {
      const url = item.image_url.url;
      if (flag(model, 'real_person') && !isPublicHttpUrl(url)) {
        throw errors.invalidRequest(`${model.id} takes real-person images only as public http(s) URLs; base64 and data: images are refused`, param);
      }
      if (!isPublicHttpUrl(url) && !isDataImage(url)) throw errors.invalidRequest(`${param} must be a public http(s) URL or a data:image/...;base64 URI`, param);
    } else if (item.type === 'video_url' || item.type === 'audio_url') {
      const url = item.type === 'video_url' ? item.video_url.url : item.audio_url.url;
      if (!isPublicHttpUrl(url)) throw errors.invalidRequest(`${param} must be a public http(s) URL`, param);
    }
  });
}

function checkResolution(model: Model, req: VideoRequest, hasReferenceVideo: boolean): void {
  const allowed = resolutionsOf(model);
  if (req.resolution === undefined) {
    if (flag(model, 'lite')) throw errors.invalidRequest(`resolution is required for ${model.id} (${allowed?.join(' or ') ?? '720p or 1080p'})`, 'resolution');
    if (flag(model, 'token_billed') && hasReferenceVideo) throw errors.invalidRequest(`resolution is required for ${model.id} with a reference video`, 'resolution');
    return;
  }
  if (allowed && !allowed.includes(req.resolution)) throw errors.invalidRequest(`resolution must be one of ${allowed.join(', ')} for ${model.id}`, 'resolution');
}

function checkVideoMode(model: Model, req: VideoRequest, hasReferenceVideo: boolean): void {
  if (req.video_mode === undefined) return;
  if (!flag(model, 'video_mode')) throw errors.invalidRequest(`video_mode is not supported by ${model.id}`, 'video_mode');
  if (!hasReferenceVideo) throw errors.invalidRequest('video_mode needs a reference_video content item', 'video_mode');
  if (req.video_mode === 'extend' && req.duration !== undefined && (req.duration < EXTEND_SECONDS.min || req.duration > EXTEND_SECONDS.max)) {
    throw errors.invalidRequest(`video_mode extend continues for ${EXTEND_SECONDS.min} to ${EXTEND_SECONDS.max} s: duration out of range`, 'duration');
  }
}

/** Validate a video body, and quote it: per second (per resolution tier where priced so), `duration` or 12 s reserved. */
export function parseVideoRequest(model: Model, body: unknown): { input: Record<string, unknown>; quote: MediaQuote } {
  const req = parseInput('body', VideoRequest, body);
  const hasReferenceVideo = req.content.some((i) => i.type === 'video_url');
  checkContent(model, req.content);
  checkResolution(model, req, hasReferenceVideo);
  checkVideoMode(model, req, hasReferenceVideo);
  const input: Record<string, unknown> = { ...req, model: model.id };
  let tier: string | undefined;
  if (model.pricing.per_second_by_tier) {
    tier = req.resolution ?? String(media(model).default_resolution ?? UPSTREAM_DEFAULT_RESOLUTION);
    if (model.pricing.per_second_by_tier[tier] === undefined) throw errors.invalidRequest(`resolution ${tier} is not offered by ${model.id}`, 'resolution');
    // The price tier is fixed here, so the upstream must render at exactly that resolution.
    input.resolution = tier;
  }
  const reserved = req.duration ?? (req.video_mode === 'extend' ? EXTEND_SECONDS.max : DEFAULT_RESERVED_SECONDS);
  return { input, quote: secondsQuote(model, { seconds: reserved, tier }) };
}
