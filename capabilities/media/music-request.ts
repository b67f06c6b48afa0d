import { z } from 'zod';
import { errors } from '../../domain/errors';
import { parseInput } from '../../domain/validation';

/**
 * `POST /v1/music/generations` (docs/media/music.md), after Suno's generate
 * call: custom mode sends `prompt` (lyrics) with `title` and `tags` (style);
 * description mode sends `gpt_description_prompt` and Suno writes the lyrics.
 */
export const MusicRequest = z.object({
  model: z.string().min(1),
  prompt: z.string().max(5000).optional(),
  gpt_description_prompt: z.string().max(500).optional(),
  title: z.string().max(80).optional(),
  tags: z.string().max(200).optional(),
  negative_tags: z.string().max(200).optional(),
  make_instrumental: z.boolean().default(false),
});
export type MusicRequest = z.infer<typeof MusicRequest>;

const filled = (s: string | undefined) => s !== undefined && s.trim() !== '';

export function parseMusicRequest(body: unknown): MusicRequest {
  const req = parseInput('body', MusicRequest, body);
  if (!filled(req.prompt) && !filled(req.gpt_description_prompt) && !(req.make_instrumental && filled(req.tags))) {
    throw errors.invalidRequest('prompt (lyrics) or gpt_description_prompt is required (an instrumental needs at least tags)', 'prompt');
  }
  return req;
}

/** `POST /v1/music/assets`: fresh links and lyrics of a finished generation's songs. */
export const MusicAssetsRequest = z.object({
  generation_id: z.string().min(1),
  song_ids: z.array(z.string().min(1)).min(1).max(10).optional(),
});
export type MusicAssetsRequest = z.infer<typeof MusicAssetsRequest>;
