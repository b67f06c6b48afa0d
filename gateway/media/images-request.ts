import { z } from 'zod';
import { errors } from '../../domain/errors';

/** Most images per request (spec 2 section 4.2). */
export const MAX_IMAGES = 10;

const ImageRef = z.string().refine((s) => /^https?:\/\//.test(s) || /^data:image\/[a-z0-9.+-]+;base64,/i.test(s), {
  message: 'must be a public http(s) URL or a data:image/...;base64,... URI',
});

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
  const r = ImagesRequest.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    const path = issue.path.join('.');
    throw errors.invalidRequest(`${path}: ${issue.message}`, path);
  }
  const refs = [...(r.data.image === undefined ? [] : Array.isArray(r.data.image) ? r.data.image : [r.data.image]), ...(r.data.image_urls ?? [])];
  if (opts.requireImage && refs.length === 0) throw errors.invalidRequest('image is required: send at least one reference image (image, image[] or image_urls)', 'image');
  return { ...r.data, references: refs };
}
