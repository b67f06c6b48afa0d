import { z } from 'zod';
import { errors } from '../../domain/errors';
import { parseInput } from '../../domain/validation';
import { PublicUrlOrDataImage } from '../../domain/url-policy';

/** Most images per request (spec 2 section 4.2). */
export const MAX_IMAGES = 10;

const ImageRef = PublicUrlOrDataImage;

export const ImagesRequest = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1),
  size: z.string().min(1).optional(),
  n: z.number().int().min(1).max(MAX_IMAGES, `n must be at most ${MAX_IMAGES}`).default(1),
  image: z.union([ImageRef, z.array(ImageRef)]).optional(),
  image_urls: z.array(ImageRef).optional(),
  async: z.boolean().default(false),
  response_format: z.enum(['url', 'b64_json']).default('url'),
});
export type ImagesRequest = z.infer<typeof ImagesRequest>;

/** Validate an images body; `image` and `image_urls` are merged, order preserved. */
export function parseImagesRequest(body: unknown, opts: { requireImage: boolean }): ImagesRequest & { references: string[] } {
  const req = parseInput('body', ImagesRequest, body);
  const refs = [...(req.image === undefined ? [] : Array.isArray(req.image) ? req.image : [req.image]), ...(req.image_urls ?? [])];
  if (opts.requireImage && refs.length === 0) throw errors.invalidRequest('image is required: send at least one reference image (image, image[] or image_urls)', 'image');
  return { ...req, references: refs };
}
