import { z } from 'zod';
import { errors } from '../../domain/errors';
import { parseInput } from '../../domain/validation';

/**
 * `POST /v1/audio/speech` (docs/media/speech.md): MiniMax T2A fields,
 * flattened. Text limits follow MiniMax: 10000 characters synchronous,
 * 50000 with `async: true`.
 */
export const SYNC_TEXT_MAX = 10_000;
export const ASYNC_TEXT_MAX = 50_000;

export const SPEECH_FORMATS = ['mp3', 'wav', 'flac', 'pcm'] as const;
const SAMPLE_RATES = [8000, 16000, 22050, 24000, 32000, 44100] as const;
const BITRATES = [32000, 64000, 128000, 256000] as const;
const oneOf = <T extends readonly number[]>(values: T) => z.number().refine((v) => values.includes(v), { message: `must be one of ${values.join(', ')}` });

export const SpeechRequest = z.object({
  model: z.string().min(1),
  text: z.string().min(1, 'text must not be empty'),
  voice_id: z.string().min(1),
  speed: z.number().min(0.5).max(2).optional(),
  vol: z.number().gt(0).max(10).optional(),
  pitch: z.number().int().min(-12).max(12).optional(),
  emotion: z.enum(['happy', 'sad', 'angry', 'fearful', 'disgusted', 'surprised', 'calm', 'neutral']).optional(),
  format: z.enum(SPEECH_FORMATS).default('mp3'),
  sample_rate: oneOf(SAMPLE_RATES).optional(),
  bitrate: oneOf(BITRATES).optional(),
  channel: z.union([z.literal(1), z.literal(2)]).optional(),
  language_boost: z.string().min(1).max(40).optional(),
  async: z.boolean().default(false),
});
export type SpeechRequest = z.infer<typeof SpeechRequest>;

/** Characters as MiniMax counts them: Unicode code points. */
export const characterCount = (text: string) => [...text].length;

export function parseSpeechRequest(body: unknown): SpeechRequest & { characters: number } {
  const req = parseInput('body', SpeechRequest, body);
  const characters = characterCount(req.text);
  const max = req.async ? ASYNC_TEXT_MAX : SYNC_TEXT_MAX;
  if (characters > max) {
    throw errors.invalidRequest(`text has ${characters} characters; at most ${max} ${req.async ? 'with async: true' : 'synchronously (send async: true for up to 50000)'}`, 'text');
  }
  return { ...req, characters };
}
