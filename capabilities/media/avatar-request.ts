import { z } from 'zod';
import { PublicUrl } from '../../domain/url-policy';
import { parseInput } from '../../domain/validation';

/** `POST /v1/videos/avatars` (spec 2 sections 2.3, 4.5). No upload endpoint: the source is a public link. */
export const AvatarRequest = z.object({
  name: z.string().refine((s) => [...s].length >= 1 && [...s].length <= 20, { message: 'must be 1 to 20 characters' }),
  source_url: PublicUrl,
  source_kind: z.enum(['image', 'video']).default('image'),
});
export type AvatarRequest = z.infer<typeof AvatarRequest>;

export const parseAvatarRequest = (body: unknown): AvatarRequest => parseInput('body', AvatarRequest, body);
