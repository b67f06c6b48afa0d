import type { MediaProvider } from './types';
import { openaiImages } from './openai-images';
import { imageTasks } from './image-tasks';
import { midjourney } from './midjourney';
import { arkVideo } from './ark-video';
import { dhVideo } from './dh-video';
import { dhAvatar } from './dh-avatar';
import { dhTranscript } from './dh-transcript';
import { suno } from './suno';
import { minimaxT2a } from './minimax-t2a';
import { minimaxVoiceClone } from './minimax-voice-clone';

/** Media adapters by the catalogue channel's `upstream` value. */
const PROVIDERS: MediaProvider[] = [openaiImages, imageTasks, midjourney, arkVideo, dhVideo, dhAvatar, dhTranscript, suno, minimaxT2a, minimaxVoiceClone];

export const mediaProviders: Record<string, MediaProvider> = Object.fromEntries(PROVIDERS.map((p) => [p.name, p]));

export function registerMediaProvider(p: MediaProvider): void {
  mediaProviders[p.name] = p;
}

export type { MediaProvider, ProviderCall, SubmitResult, PollResult, ProviderOutcome } from './types';
export { createMediaHttp, UpstreamHttpError, UpstreamTransportError, type MediaHttp } from './http';
