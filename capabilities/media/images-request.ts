import { z } from 'zod';
import { errors } from '../../domain/errors';
import { parseInput } from '../../domain/validation';
import { PublicHttpsUrlOrDataImage } from '../../domain/url-policy';

/** Most images per request (spec 2 section 4.2). */
export const MAX_IMAGES = 10;

/** Spec 2 section 4.2: a public https URL or a data:image URI (plain http is refused here, unlike the video and avatar URLs). */
const ImageRef = PublicHttpsUrlOrDataImage;

/**
 * Other fields go to the vendor unchanged (`quality`, `background`, an edits `mask`...) and are stored
 * with the task: a value is a scalar, or a flat list or map of scalars (the store cannot hold arrays
 * in arrays), under a plain field name (no `$`, `.` or control characters).
 */
const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const PassThrough = z.union([Scalar, z.array(Scalar).max(100), z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), Scalar)], {
  error: 'must be a string, number, boolean, null, or a flat list or map of those',
});
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

export const ImagesRequest = z.object({
  model: z.string().min(1),
  prompt: z.string().min(1),
  size: z.string().min(1).optional(),
  n: z.number().int().min(1).max(MAX_IMAGES, `n must be at most ${MAX_IMAGES}`).default(1),
  image: z.union([ImageRef, z.array(ImageRef)]).optional(),
  image_urls: z.array(ImageRef).optional(),
  async: z.boolean().default(false),
  response_format: z.enum(['url', 'b64_json']).default('url'),
}).catchall(PassThrough).superRefine((body, ctx) => {
  for (const key of Object.keys(body)) {
    if (!FIELD_NAME.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'is not a field name this endpoint takes (letters, digits, _ and -, at most 64)' });
  }
});
export type ImagesRequest = z.infer<typeof ImagesRequest>;

/** Validate an images body; `image` and `image_urls` are merged, order preserved. */
export function parseImagesRequest(body: unknown, opts: { requireImage: boolean }): ImagesRequest & { references: string[] } {
  const req = parseInput('body', ImagesRequest, body);
  const refs = [...(req.image === undefined ? [] : Array.isArray(req.image) ? req.image : [req.image]), ...(req.image_urls ?? [])];
  if (opts.requireImage && refs.length === 0) throw errors.invalidRequest('image is required: send at least one reference image (image, image[] or image_urls)', 'image');
  return { ...req, references: refs };
}
