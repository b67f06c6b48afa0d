import { z } from 'zod';
import { PublicUrl } from '../../domain/url-policy';
import { parseInput } from '../../domain/validation';

/**
 * `POST /v1/audio/voices` and `POST /v1/audio/voice-clone` (docs/media/speech.md),
 * after MiniMax voice_clone. The gateway picks the voice id (the task id).
 */
export const VOICE_CLONE_MODEL = 'voice-clone';
export const DEFAULT_PREVIEW_MODEL = 'speech-2-5-hd';

export const VoiceCloneRequest = z.object({
  model: z.string().min(1).default(VOICE_CLONE_MODEL),
  /** The voice sample: a public mp3, m4a or wav link, 10 s to 5 min. */
  audio_url: PublicUrl,
  name: z.string().min(1).max(50).optional(),
  /** Preview text: when given, the answer carries `demo_audio` spoken in the new voice. */
  text: z.string().min(1).max(1000).optional(),
  preview_model: z.string().min(1).optional(),
  need_noise_reduction: z.boolean().optional(),
  need_volume_normalization: z.boolean().optional(),
});
export type VoiceCloneRequest = z.infer<typeof VoiceCloneRequest>;

export const parseVoiceCloneRequest = (body: unknown): VoiceCloneRequest => parseInput('body', VoiceCloneRequest, body);
