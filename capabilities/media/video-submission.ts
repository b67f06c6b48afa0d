import { errors } from '../../domain/errors';
import type { Model } from '../../domain/catalogue';
import type { MediaQuote } from '../../domain/media/pricing';
import type { MediaModels } from './store';
import { usableAvatar } from './avatar-store';
import { usableVoice } from './voice-store';
import { parseVideoRequest } from './video-request';
import { avatarVideoInput, parseAvatarVideo, parseLipsync, parseMotion } from './video-dh-request';
import { parseClip } from './video-clip-request';
import { PIN_CHANNEL_KEY } from '../../providers/media/dh-video';

/** The public collection every video, digital-human and clip task is listed in. */
export const VIDEO_ENDPOINT = 'videos';

/** Models on this endpoint whose refusals use the digital-human error dialect (spec 2 section 7.4). */
export function usesDigitalHumanDialect(model: Model | undefined): boolean {
  return model?.endpoint_type === 'digital-human' || model?.endpoint_type === 'clip';
}

export interface VideoSubmission {
  input: Record<string, unknown>;
  quote: MediaQuote;
}

/** Validate a body for its model's kind and quote it; 503 no_channel_available for models of other endpoints. */
export async function prepareVideoSubmission(db: MediaModels, accountId: string, model: Model, body: unknown): Promise<VideoSubmission> {
  if (model.endpoint_type === 'video') return parseVideoRequest(model, body);
  if (model.endpoint_type === 'clip') return parseClip(model, body);
  if (model.endpoint_type === 'digital-human') {
    switch (model.media?.kind) {
      case 'avatar_video': {
        const { req, quote } = parseAvatarVideo(model, body);
        const avatar = await usableAvatar(db, accountId, req.avatar);
        if (req.voice !== undefined) await usableVoice(db, accountId, req.voice, 'voice');
        const input = avatarVideoInput(req, avatar.upstreamAvatarId);
        const pinned = avatar.channel && (model.channels.task ?? []).some((c) => c.id === avatar.channel);
        return { input: pinned ? { ...input, [PIN_CHANNEL_KEY]: avatar.channel } : input, quote };
      }
      case 'lipsync':
        return parseLipsync(model, body);
      case 'motion':
        return parseMotion(model, body);
    }
  }
  throw errors.noChannel(model.id, 'videos generations');
}
